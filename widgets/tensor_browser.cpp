#include "widgets/tensor_browser.h"

#include "widgets/name_elision.h"
#include "widgets/qt_util.h"
#include "widgets/tensor_tree_model.h"

#include <QCollator>
#include <QHeaderView>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTreeView>
#include <QVBoxLayout>

namespace ql {
namespace {

// Names sort as people count: conv2d_2 before conv2d_11, layers.9 before layers.10.
class NaturalSortProxy : public QSortFilterProxyModel {
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;

protected:
    bool lessThan(const QModelIndex& left, const QModelIndex& right) const override {
        const QVariant l = left.data(sortRole()), r = right.data(sortRole());
        if (l.typeId() == QMetaType::QString && r.typeId() == QMetaType::QString)
            return m_collator.compare(l.toString(), r.toString()) < 0;
        return QSortFilterProxyModel::lessThan(left, right);
    }

private:
    QCollator m_collator = [] {
        QCollator c{QLocale(QLocale::English)}; // the C locale would ignore numeric mode
        c.setNumericMode(true);
        return c;
    }();
};

} // namespace
} // namespace ql

namespace ql {

TensorBrowser::TensorBrowser(QWidget* parent)
    : QWidget(parent)
    , m_model(new TensorTreeModel(this))
    , m_proxy(new NaturalSortProxy(this))
    , m_filter(new QLineEdit(this))
    , m_view(new QTreeView(this)) {
    m_proxy->setSourceModel(m_model);
    // A prefix stays visible while any tensor below it matches.
    m_proxy->setRecursiveFilteringEnabled(true);
    m_proxy->setFilterRole(TensorTreeModel::PathRole);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_proxy->setSortRole(TensorTreeModel::SortRole);

    m_filter->setPlaceholderText(tr("Filter tensors (e.g. conv, .w_0)"));
    m_filter->setToolTip(tr("Shows only tensors whose full name contains this text (case-insensitive)"));
    m_filter->setClearButtonEnabled(true);
    connect(m_filter, &QLineEdit::textChanged, this, [this](const QString& text) {
        m_proxy->setFilterFixedString(text);
        if (!text.isEmpty()) m_view->expandAll();
    });

    m_view->setModel(m_proxy);
    m_view->setToolTip(tr("Tensors of the open file, grouped by name prefix; select one to see its values"));
    m_view->setUniformRowHeights(true);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(TensorTreeModel::NameColumn, Qt::AscendingOrder);
    m_view->setAlternatingRowColors(true);
    // A long name keeps its last parts whole (down_proj.weight and down_proj.bias, If_1_param_conv and
    // If_2_param_conv stay apart) and gives way at its start; the tooltip holds it whole.
    m_view->setItemDelegateForColumn(TensorTreeModel::NameColumn, new NameElisionDelegate(m_view));
    // The name keeps a readable width however narrow the dock: the other columns scroll into view
    // (and the tooltip repeats them) rather than squeezing names to a few letters.
    QHeaderView* header = m_view->header();
    header->setStretchLastSection(false);
    header->setSectionResizeMode(QHeaderView::Interactive);
    header->resizeSection(TensorTreeModel::NameColumn, 190);
    header->resizeSection(TensorTreeModel::ShapeColumn, 95);
    header->resizeSection(TensorTreeModel::DTypeColumn, 45);
    header->resizeSection(TensorTreeModel::SizeColumn, 65);
    connect(m_view->selectionModel(), &QItemSelectionModel::currentChanged, this,
            [this](const QModelIndex& current) {
                const QString name =
                    current.siblingAtColumn(0).data(TensorTreeModel::TensorNameRole).toString();
                if (!name.isEmpty()) emit tensorSelected(name);
            });

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_filter);
    layout->addWidget(m_view);
}

void TensorBrowser::setSource(const TensorSource* source) {
    m_source = source;
    m_filter->clear(); // the last model's filter would hide this one's tensors
    m_model->setTensors(source ? source->tensors() : std::vector<TensorInfo>{});
    // Small files open fully expanded; big ones show their top level.
    if (source && source->tensors().size() <= 64) m_view->expandAll();
}

bool TensorBrowser::selectTensor(const std::string& name) {
    const QModelIndex src = m_model->indexOfTensor(name);
    if (!src.isValid()) return false;
    QModelIndex idx = m_proxy->mapFromSource(src);
    if (!idx.isValid()) { // hidden by the filter: clear it rather than select something invisible
        m_filter->clear();
        idx = m_proxy->mapFromSource(src);
    }
    m_view->scrollTo(idx);
    m_view->selectionModel()->setCurrentIndex(idx, QItemSelectionModel::ClearAndSelect |
                                                       QItemSelectionModel::Rows);
    return true;
}

std::string TensorBrowser::selectedTensor() const {
    return ss(m_view->currentIndex().siblingAtColumn(0).data(TensorTreeModel::TensorNameRole).toString());
}

std::string TensorBrowser::firstTensorOfRank(int rank) const {
    if (!m_source) return {};
    for (const auto& t : m_source->tensors())
        if (static_cast<int>(t.shape.size()) == rank && isFloating(t.dtype)) return t.name;
    return {};
}

} // namespace ql
