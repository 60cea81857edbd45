#include "widgets/model_table_model.h"

#include "widgets/qt_util.h"

#include <QColor>
#include <QStringList>
#include <algorithm>

namespace ql {

ModelTableModel::ModelTableModel(QObject* parent)
    : QAbstractTableModel(parent) {}

void ModelTableModel::setRows(std::vector<ModelRow> rows) {
    beginResetModel();
    m_rows = std::move(rows);
    m_checkFailures.clear();
    sortWorstFirst(m_rows);
    endResetModel();
}

void ModelTableModel::setCheckFailures(std::map<std::string, std::vector<std::string>> failures) {
    m_checkFailures = std::move(failures);
    if (!m_rows.empty()) emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

const std::vector<std::string>& ModelTableModel::checkFailures(int row) const {
    static const std::vector<std::string> none;
    if (row < 0 || row >= rowCount()) return none;
    const auto it = m_checkFailures.find(m_rows[static_cast<std::size_t>(row)].name);
    return it == m_checkFailures.end() ? none : it->second;
}

int ModelTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int ModelTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ModelTableModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
    const ModelRow& r = m_rows[static_cast<std::size_t>(index.row())];
    const bool failed = !r.error.empty();
    const bool kept = !r.kept.empty(); // passed through unquantized
    const std::vector<std::string>& broken = checkFailures(index.row());
    QString problem = failed ? qs(r.error)
                      : kept ? tr("kept unquantized: %1").arg(qs(r.kept))
                             : qs(nonFiniteNote(r.nonFinite, r.nonFiniteOutputs));
    if (!broken.empty()) { // the rules' verdict first: it is why the row is marked
        QStringList rules;
        for (const std::string& f : broken)
            rules << qs(f);
        const QString verdict = tr("fails %1").arg(rules.join(QStringLiteral("; ")));
        problem = problem.isEmpty() ? verdict : verdict + QStringLiteral("; ") + problem;
    }
    if (role == TensorNameRole) return qs(r.name);
    if (role == CheckFailedRole) return !broken.empty();
    if (role == Qt::BackgroundRole && !broken.empty()) return QColor(253, 231, 233);
    if (role == Qt::ToolTipRole) {
        QString tip = qs(r.name);
        if (!r.axes.empty()) { // each tensor's own: its role's, unless an axis was picked
            QStringList axes;
            for (int a : r.axes)
                axes << QString::number(a);
            tip += tr("\nscales along axis %1").arg(axes.join(QLatin1Char(',')));
        }
        return plainToolTip(problem.isEmpty() ? tip : tip + QStringLiteral("\n") + problem);
    }
    if (role == Qt::ForegroundRole && failed) return QColor(176, 0, 32);
    if (role == Qt::ForegroundRole && kept) return QColor(110, 110, 110);
    if (role == Qt::ForegroundRole && r.nonFiniteOutputs > 0) return QColor(176, 0, 32);
    if (role == Qt::TextAlignmentRole && index.column() >= SqnrColumn && index.column() <= TimeColumn)
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    if (role != Qt::DisplayRole) return {};
    if ((failed || kept) && index.column() >= SqnrColumn && index.column() <= TimeColumn)
        return QStringLiteral("—");
    switch (index.column()) {
    case NameColumn:
        return qs(r.name);
    case ShapeColumn:
        return qs(r.shape);
    case SqnrColumn:
        return fmtNumber(r.sqnrDb, 4);
    case WeightedSqnrColumn:
        return fmtNumber(r.weightedSqnrDb, 4);
    case MaxErrorColumn:
        return fmtNumber(r.maxAbsError);
    case RelErrorColumn:
        return fmtNumber(r.relError);
    case CosineColumn:
        return fmtNumber(r.cosine, 6);
    case ClippedColumn:
        return fmtNumber(100.0 * r.clippedFraction, 3);
    case CodesColumn:
        return static_cast<qlonglong>(r.codesUsed);
    case TimeColumn:
        return fmtNumber(r.totalMs, 3);
    case ErrorColumn:
        return problem;
    }
    return {};
}

QVariant ModelTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
    static const char* names[] = {"Tensor",    "Shape",    "SQNR dB", "Weighted SQNR dB",
                                  "Max |err|", "Rel. err", "Cosine",  "Clipped %",
                                  "Codes",     "Time ms",  "Problem"};
    if (role == Qt::DisplayRole) return tr(names[section]);
    if (role == Qt::ToolTipRole && section == WeightedSqnrColumn)
        return tr(
            "The layer output's SQNR: each input channel's error weighted by its mean squared activation "
            "(File > Open importance). With it, the table ranks by this column");
    if (role == Qt::ToolTipRole) return tr("Click to sort; the first click puts the worst tensors on top");
    return {};
}

void ModelTableModel::sort(int column, Qt::SortOrder order) {
    const bool worstFirst = order == Qt::AscendingOrder;
    emit layoutAboutToBeChanged({}, QAbstractItemModel::VerticalSortHint);
    const QModelIndexList before = persistentIndexList();
    std::vector<std::string> names;
    for (const QModelIndex& i : before)
        names.push_back(m_rows[static_cast<std::size_t>(i.row())].name);
    switch (column) {
    case SqnrColumn:
        sortRows(m_rows, ModelColumn::Sqnr, worstFirst);
        break;
    case WeightedSqnrColumn:
        sortRows(m_rows, ModelColumn::WeightedSqnr, worstFirst);
        break;
    case MaxErrorColumn:
        sortRows(m_rows, ModelColumn::MaxAbsError, worstFirst);
        break;
    case RelErrorColumn:
        sortRows(m_rows, ModelColumn::RelError, worstFirst);
        break;
    case CosineColumn:
        sortRows(m_rows, ModelColumn::Cosine, worstFirst);
        break;
    case ClippedColumn:
        sortRows(m_rows, ModelColumn::Clipped, worstFirst);
        break;
    case TimeColumn:
        sortRows(m_rows, ModelColumn::TotalMs, worstFirst);
        break;
    default:
        sortRows(m_rows, ModelColumn::Name, worstFirst);
        break;
    }
    QModelIndexList after;
    for (std::size_t k = 0; k < names.size(); ++k) {
        const auto it =
            std::find_if(m_rows.begin(), m_rows.end(), [&](const ModelRow& r) { return r.name == names[k]; });
        after << index(static_cast<int>(it - m_rows.begin()), before[static_cast<qsizetype>(k)].column());
    }
    changePersistentIndexList(before, after);
    emit layoutChanged({}, QAbstractItemModel::VerticalSortHint);
}

} // namespace ql
