#include "widgets/model_table_page.h"

#include "widgets/model_table_model.h"
#include "widgets/result_table.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

namespace ql {

ModelTablePage::ModelTablePage(QWidget* parent)
    : QWidget(parent)
    , m_model(new ModelTableModel(this))
    , m_view(new QTableView(this))
    , m_summary(new QLabel(this)) {
    m_view->setModel(m_model);
    m_view->setSortingEnabled(true);
    m_view->horizontalHeader()->setSortIndicator(ModelTableModel::SqnrColumn, Qt::AscendingOrder);
    m_view->setColumnHidden(ModelTableModel::WeightedSqnrColumn, true); // until a run has importance
    styleResultTable(m_view); // one line per tensor: the reason a tensor failed is in its tooltip
    m_view->setToolTip(
        tr("Every tensor quantized with the current spec, worst SQNR first; double-click a row to "
           "open that tensor"));
    connect(m_view, &QTableView::doubleClicked, this, [this](const QModelIndex& i) {
        emit tensorActivated(i.data(ModelTableModel::TensorNameRole).toString());
    });
    clear(tr("Run ▸ Quantize all fills this table."));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(m_summary);
    layout->addWidget(m_view);
}

void ModelTablePage::setRows(std::vector<ModelRow> rows) {
    int failed = 0, kept = 0;
    for (const auto& r : rows) {
        failed += !r.error.empty();
        kept += !r.kept.empty();
    }
    const int n = static_cast<int>(rows.size());
    const bool weighted = anyWeighted(rows);
    m_model->setRows(std::move(rows)); // ranked by the weighted SQNR when there is one
    m_view->setColumnHidden(ModelTableModel::WeightedSqnrColumn, !weighted);
    fitResultColumns(m_view, {ModelTableModel::NameColumn});
    m_view->horizontalHeader()->setSortIndicator(
        weighted ? ModelTableModel::WeightedSqnrColumn : ModelTableModel::SqnrColumn, Qt::AscendingOrder);
    QString text = tr("%n tensor(s) quantized", nullptr, n - failed - kept);
    if (failed) text += tr("; %n failed (shown first, reason in the last column)", nullptr, failed);
    if (kept)
        text +=
            tr("; %n kept unquantized: the spec does not apply to them (shown last, an export copies them "
               "as they are)",
               nullptr, kept);
    m_summary->setText(text + QLatin1Char('.'));
}

QString ModelTablePage::summaryText() const {
    return m_summary->text();
}

void ModelTablePage::clear(const QString& message) {
    m_model->setRows({});
    m_summary->setText(message);
}

bool ModelTablePage::exportTo(const QString& path) const {
    // Every row in the current order, not the part scrolled into view: a view of its own, sized to
    // hold them all, drawn off screen (an image taller than a painter can address is refused).
    constexpr int kMaxRows = 1500;
    const int rows = m_view->model()->rowCount();
    if (rows > kMaxRows) return false;
    QTableView all;
    all.setModel(m_view->model());
    all.setWordWrap(false);
    all.setAlternatingRowColors(true);
    all.verticalHeader()->setVisible(false);
    all.verticalHeader()->setDefaultSectionSize(m_view->verticalHeader()->defaultSectionSize());
    all.setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    all.setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    const int height = 2 * all.frameWidth() + m_view->horizontalHeader()->height() +
                       rows * m_view->verticalHeader()->defaultSectionSize();
    all.horizontalHeader()->setFixedHeight(m_view->horizontalHeader()->height());
    all.resize(m_view->width(), height); // every row in view, so the name column fits them all
    for (int c = 0; c < m_view->model()->columnCount(); ++c)
        all.setColumnWidth(c, m_view->columnWidth(c));
    all.resizeColumnToContents(ModelTableModel::NameColumn); // whole names: an image has no tooltip
    int width = 2 * all.frameWidth();
    for (int c = 0; c < m_view->model()->columnCount(); ++c)
        width += all.columnWidth(c);
    all.resize(width, height);
    return all.grab().save(path);
}

} // namespace ql
