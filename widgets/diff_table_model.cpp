#include "widgets/diff_table_model.h"

#include "widgets/qt_util.h"

#include <QColor>
#include <algorithm>
#include <cmath>
#include <numeric>

namespace ql {
namespace {

// The value a column sorts by, with the bad end low: failures first, then pairs with NaN/Inf on one
// side only (whatever their finite rest gives), NaN (nothing to measure) last.
double badness(const TensorDiff& d, int column) {
    if (!d.failure.empty()) return -INFINITY;
    if (d.nonFiniteMismatches > 0) return std::nextafter(-INFINITY, 0.0);
    double v = NAN;
    switch (column) {
    case DiffTableModel::SqnrColumn:
        v = d.stats.sqnrDb();
        break;
    case DiffTableModel::MaxDiffColumn:
        v = -d.stats.maxAbsError();
        break;
    case DiffTableModel::MaxUlpColumn:
        v = -static_cast<double>(d.maxUlp);
        break;
    case DiffTableModel::CosineColumn:
        v = d.stats.cosine();
        break;
    case DiffTableModel::CodesColumn:
        if (d.codes) v = -static_cast<double>(d.codes->mismatches);
        break;
    }
    return std::isnan(v) ? INFINITY : v;
}

QString text(const TensorDiff& d, int column) {
    switch (column) {
    case DiffTableModel::NameColumn:
        return qs(d.pair.a);
    case DiffTableModel::NameBColumn:
        return qs(d.pair.b);
    case DiffTableModel::MatchedColumn:
        return qs(d.pair.how);
    case DiffTableModel::ShapeColumn:
        return qs(toString(d.shape));
    case DiffTableModel::NoteColumn:
        return qs(d.failure.empty() ? d.note : "could not compare: " + d.failure);
    }
    if (!d.failure.empty()) return {};
    switch (column) {
    case DiffTableModel::SqnrColumn:
        return fmtNumber(d.stats.sqnrDb(), 4);
    case DiffTableModel::MaxDiffColumn:
        return fmtNumber(d.stats.maxAbsError(), 4);
    case DiffTableModel::MaxUlpColumn:
        return QString::number(d.maxUlp);
    case DiffTableModel::CosineColumn:
        return fmtNumber(d.stats.cosine(), 7);
    case DiffTableModel::CodesColumn:
        if (!d.codes) return QStringLiteral("—");
        return d.codes->mismatches == 0 ? DiffTableModel::tr("all %1 equal").arg(d.codes->compared)
                                        : DiffTableModel::tr("%1 of %2 (max ±%3)")
                                              .arg(d.codes->mismatches)
                                              .arg(d.codes->compared)
                                              .arg(d.codes->maxDelta);
    }
    return {};
}

} // namespace

DiffTableModel::DiffTableModel(QObject* parent)
    : QAbstractTableModel(parent) {}

void DiffTableModel::setOutcome(std::shared_ptr<const DiffOutcome> outcome) {
    beginResetModel();
    m_outcome = std::move(outcome);
    m_order.resize(m_outcome ? m_outcome->diffs.size() : 0);
    std::iota(m_order.begin(), m_order.end(), std::size_t{0});
    endResetModel();
    sort(SqnrColumn);
}

const TensorDiff& DiffTableModel::diffAt(int row) const {
    return m_outcome->diffs[m_order.at(static_cast<std::size_t>(row))];
}

int DiffTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(m_order.size());
}

int DiffTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant DiffTableModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid)) return {};
    const TensorDiff& d = diffAt(index.row());
    switch (role) {
    case Qt::DisplayRole:
        return text(d, index.column());
    case DiffIndexRole:
        return static_cast<qulonglong>(m_order[static_cast<std::size_t>(index.row())]);
    case Qt::ToolTipRole: {
        QString tip = tr("A: %1\nB: %2 (matched: %3)").arg(qs(d.pair.a), qs(d.pair.b), qs(d.pair.how));
        if (d.codes)
            tip += tr("\nCodes: %1 vs %2; %3 of %4 scales differ")
                       .arg(qs(d.codes->formatA), qs(d.codes->formatB))
                       .arg(d.codes->scaleMismatches)
                       .arg(d.codes->scales);
        const QString note = text(d, NoteColumn);
        return plainToolTip(note.isEmpty() ? tip : tip + QLatin1Char('\n') + note);
    }
    case Qt::TextAlignmentRole:
        if (index.column() >= SqnrColumn && index.column() <= CodesColumn)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case Qt::ForegroundRole:
        if (!d.failure.empty()) return QColor(Qt::darkRed);
        return {};
    }
    return {};
}

QVariant DiffTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal) return {};
    static const char* const titles[ColumnCount] = {
        QT_TR_NOOP("Tensor (A)"),   QT_TR_NOOP("In B"),      QT_TR_NOOP("Matched"), QT_TR_NOOP("Shape"),
        QT_TR_NOOP("SQNR dB"),      QT_TR_NOOP("max |A−B|"), QT_TR_NOOP("max ULP"), QT_TR_NOOP("Cosine"),
        QT_TR_NOOP("Codes differ"), QT_TR_NOOP("Note")};
    // A tip written over two lines is one literal, not a missing comma.
    // NOLINTBEGIN(bugprone-suspicious-missing-comma)
    static const char* const tips[ColumnCount] = {
        QT_TR_NOOP("The tensor's name in A, the reference"),
        QT_TR_NOOP("Its counterpart's name in B"),
        QT_TR_NOOP("How the names were matched: exact, through the Hugging Face <-> GGUF naming, or "
                   "onnxruntime's QDQ naming"),
        QT_TR_NOOP("The tensor's shape"),
        QT_TR_NOOP("10·log10(ΣA² / Σ(A−B)²): B as a reconstruction of A; higher is closer"),
        QT_TR_NOOP("The largest absolute difference of one element"),
        QT_TR_NOOP("The largest difference in units in the last place, in the coarser of the two dtypes"),
        QT_TR_NOOP("Cosine similarity of A and B"),
        QT_TR_NOOP("When both sides store codes on one grid (or A is re-quantized): how many codes differ, "
                   "and by how many steps at most"),
        QT_TR_NOOP("What to know when reading the row, or why the pair could not be compared")};
    // NOLINTEND(bugprone-suspicious-missing-comma)
    if (section < 0 || section >= ColumnCount) return {};
    if (role == Qt::DisplayRole) return tr(titles[section]);
    if (role == Qt::ToolTipRole) return tr(tips[section]);
    return {};
}

void DiffTableModel::sort(int column, Qt::SortOrder order) {
    if (!m_outcome) return;
    emit layoutAboutToBeChanged({}, QAbstractItemModel::VerticalSortHint);
    // Persistent indexes (the view's selection) follow their pairs, not their row numbers.
    const QModelIndexList before = persistentIndexList();
    std::vector<std::size_t> pairs;
    pairs.reserve(static_cast<std::size_t>(before.size()));
    for (const QModelIndex& i : before)
        pairs.push_back(m_order[static_cast<std::size_t>(i.row())]);
    const auto& diffs = m_outcome->diffs;
    const bool numeric = column >= SqnrColumn && column <= CodesColumn;
    std::stable_sort(m_order.begin(), m_order.end(), [&](std::size_t i, std::size_t j) {
        const bool less = numeric ? badness(diffs[i], column) < badness(diffs[j], column)
                                  : text(diffs[i], column) < text(diffs[j], column);
        const bool greater = numeric ? badness(diffs[j], column) < badness(diffs[i], column)
                                     : text(diffs[j], column) < text(diffs[i], column);
        return order == Qt::AscendingOrder ? less : greater;
    });
    std::vector<int> rowOf(m_order.size());
    for (std::size_t r = 0; r < m_order.size(); ++r)
        rowOf[m_order[r]] = static_cast<int>(r);
    QModelIndexList after;
    after.reserve(before.size());
    for (qsizetype k = 0; k < before.size(); ++k)
        after.push_back(index(rowOf[pairs[static_cast<std::size_t>(k)]], before[k].column()));
    changePersistentIndexList(before, after);
    emit layoutChanged({}, QAbstractItemModel::VerticalSortHint);
}

} // namespace ql
