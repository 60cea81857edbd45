#include "widgets/plan_table_model.h"

#include "widgets/qt_util.h"

#include <QColor>

namespace ql {

PlanTableModel::PlanTableModel(QObject* parent)
    : QAbstractTableModel(parent) {}

void PlanTableModel::setPlan(std::shared_ptr<const PlanMeasurements> m, const PlanResult& result) {
    beginResetModel();
    m_measurements = std::move(m);
    m_choice = m_measurements ? result.solution.choice : std::vector<int>{};
    endResetModel();
}

int PlanTableModel::rowCount(const QModelIndex& parent) const {
    if (parent.isValid() || !m_measurements) return 0;
    return static_cast<int>(m_choice.size() + m_measurements->notPlanned.size());
}

int PlanTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant PlanTableModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
    const auto row = static_cast<std::size_t>(index.row());
    if (row >= m_choice.size()) { // not planned: kept as it is, for the reason given
        const auto& [name, why] = m_measurements->notPlanned[row - m_choice.size()];
        if (role == Qt::ToolTipRole) return plainToolTip(tr("%1\nnot planned: %2").arg(qs(name), qs(why)));
        if (role == Qt::ForegroundRole) return QColor(110, 110, 110);
        if (role != Qt::DisplayRole) return {};
        if (index.column() == NameColumn) return qs(name);
        if (index.column() == FormatColumn) return tr("not planned");
        if (index.column() == NoteColumn) return qs(why);
        return QStringLiteral("—");
    }
    const PlanTensor& t = m_measurements->tensors[row];
    const auto k = static_cast<std::size_t>(m_choice[row]);
    const PlanCell& c = t.cells[k];
    if (role == Qt::ToolTipRole) {
        QString tip = qs(t.name);
        for (std::size_t i = 0; i < t.cells.size(); ++i) {
            const PlanCell& o = t.cells[i];
            tip += QStringLiteral("\n%1: ").arg(qs(m_measurements->candidates[i].name)) +
                   (o.bits < 0
                        ? tr("not available: %1").arg(qs(o.why))
                        : tr("%1 bits/w, SQNR %2 dB")
                              .arg(fmtNumber(static_cast<double>(o.bits) / static_cast<double>(t.elements)),
                                   fmtNumber(o.sqnrDb)));
        }
        return plainToolTip(tip);
    }
    if (role == Qt::TextAlignmentRole && index.column() >= BitsColumn && index.column() <= ErrorColumn)
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
    case NameColumn:
        return qs(t.name);
    case FormatColumn:
        return qs(m_measurements->candidates[k].name);
    case BitsColumn:
        return fmtNumber(static_cast<double>(c.bits) / static_cast<double>(t.elements), 4);
    case SqnrColumn:
        return fmtNumber(c.sqnrDb, 4);
    case ErrorColumn:
        return fmtNumber(c.error, 4);
    case NoteColumn:
        return qs(t.note);
    }
    return {};
}

QVariant PlanTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
    const bool weighted = m_measurements && !m_measurements->importance.empty();
    if (role == Qt::DisplayRole) {
        switch (section) {
        case NameColumn:
            return tr("Tensor");
        case FormatColumn:
            return tr("Format");
        case BitsColumn:
            return tr("Bits/weight");
        case SqnrColumn:
            return tr("SQNR dB");
        case ErrorColumn:
            return weighted ? tr("Weighted sq. error") : tr("Sq. error");
        case NoteColumn:
            return tr("Note");
        }
    }
    if (role == Qt::ToolTipRole && section == NoteColumn)
        return tr("Where a weight's importance came from, or why a tensor was not planned");
    if (role == Qt::ToolTipRole && section == ErrorColumn)
        return weighted ? tr("Σ E[x_j²] (w − ŵ)²: the expected squared error in the layer's output")
                        : tr("Σ (w − ŵ)² over the weight");
    return {};
}

} // namespace ql
