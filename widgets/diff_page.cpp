#include "widgets/diff_page.h"

#include "widgets/diff_table_model.h"
#include "widgets/file_filters.h"
#include "widgets/job_runner.h"
#include "widgets/plot_page.h"
#include "widgets/qcp.h"
#include "widgets/qt_util.h"
#include "widgets/result_table.h"
#include "widgets/save_file.h"
#include "widgets/workbench.h"

#include <QCheckBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

namespace ql {
namespace {

QString listed(const std::vector<std::string>& names) {
    QStringList shown;
    for (std::size_t i = 0; i < names.size() && i < 3; ++i)
        shown << qs(names[i]);
    return shown.join(QStringLiteral(", ")) + (names.size() > 3 ? QStringLiteral(", …") : QString());
}

QString codesText(const TensorDiff& d) {
    if (!d.codes) return {};
    const CodeDiff& c = *d.codes;
    return DiffPage::tr(" Codes (%1 vs %2): %3 of %4 differ, by at most %5; %6 of %7 scales differ.")
        .arg(qs(c.formatA), qs(c.formatB))
        .arg(c.mismatches)
        .arg(c.compared)
        .arg(c.maxDelta)
        .arg(c.scaleMismatches)
        .arg(c.scales);
}

} // namespace

DiffPage::DiffPage(Workbench* bench, QWidget* parent)
    : QWidget(parent)
    , m_bench(bench)
    , m_choose(new QPushButton(tr("Diff against…"), this))
    , m_requantize(new QCheckBox(tr("Re-quantize A"), this))
    , m_save(new QPushButton(tr("Save diff report…"), this))
    , m_summary(new QLabel(this))
    , m_model(new DiffTableModel(this))
    , m_view(new QTableView(this))
    , m_plot(new QCustomPlot(this))
    , m_note(new QLabel(this)) {
    m_choose->setToolTip(tr("Compare the open model (A) with another checkpoint of it (B): its GGUF, its "
                            "ONNX QDQ model, a compressed-tensors export or another export (File ▸ Diff "
                            "against…)"));
    connect(m_choose, &QPushButton::clicked, this, &DiffPage::chooseTarget);
    connect(bench, &Workbench::sourceChanged, this, [this] {
        clear(tr("Diff %1 against another checkpoint of it: File ▸ Diff against… (Ctrl+Shift+D).")
                  .arg(m_bench->fileName()));
    });
    m_requantize->setToolTip(tr("Quantize A's tensors with the preset and settings on the right and compare "
                                "those codes with the ones B stores (an ONNX QDQ model, a GGUF's Q8_0/Q4_0/"
                                "Q5_0 blocks, a compressed-tensors export): which codes would this "
                                "operator's arithmetic give differently?"));
    m_save->setToolTip(tr("The diff as a JSON report: quantlens-cli check gates it with rules such as "
                          "'sqnr < 30' or 'max_ulp > 0'"));
    m_save->setEnabled(false);
    connect(m_save, &QPushButton::clicked, this, [this] {
        const QString path = saveFileName(this, tr("Save the diff report"), tr("JSON (*.json)"));
        if (path.isEmpty()) return;
        QString error;
        if (writeReport(path, &error))
            m_bench->showMessage(tr("Wrote the diff report to %1.").arg(path), false);
        else
            m_bench->showMessage(tr("Could not write the diff report: %1").arg(error), true);
    });
    auto* controls = new QHBoxLayout;
    controls->addWidget(m_choose);
    controls->addWidget(m_requantize);
    controls->addWidget(m_save);
    controls->addStretch(1);

    m_summary->setTextFormat(Qt::PlainText); // it quotes names from files: never read as HTML
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    controls->addWidget(filterResultRows(m_view, m_model, DiffTableModel::NameColumn));
    m_view->setSortingEnabled(true);
    m_view->horizontalHeader()->setSortIndicator(DiffTableModel::SqnrColumn, Qt::AscendingOrder);
    styleResultTable(m_view);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (current.isValid()) showRow(sourceRow(current));
            });

    m_plot->setMinimumHeight(160);
    m_plot->plotLayout()->insertRow(0);
    m_plot->plotLayout()->addElement(
        0, 0, new QCPTextElement(m_plot, QString(), QFont(font().family(), 10, QFont::Bold)));
    m_plot->xAxis->setLabel(tr("A − B"));
    m_plot->yAxis->setLabel(tr("elements"));
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    PlotPage::fitTicksOnReplot(m_plot);
    m_plot->setToolTip(tr("The selected pair's differences A − B (B as a reconstruction of A)"));
    m_note->setTextFormat(Qt::PlainText);
    m_note->setWordWrap(true);
    m_note->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* below = new QWidget(this);
    auto* belowLayout = new QVBoxLayout(below);
    belowLayout->setContentsMargins(0, 0, 0, 0);
    belowLayout->addWidget(m_plot, 1);
    belowLayout->addWidget(m_note);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_view);
    split->addWidget(below);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addLayout(controls);
    layout->addWidget(m_summary);
    layout->addWidget(split, 1);
    clear(tr("Diff the open model against another checkpoint of it: File ▸ Diff against… or the button "
             "above."));
}

void DiffPage::setOutcome(std::shared_ptr<const DiffOutcome> outcome) {
    m_outcome = std::move(outcome);
    m_model->setOutcome(m_outcome);
    m_view->horizontalHeader()->setSortIndicator(DiffTableModel::SqnrColumn, Qt::AscendingOrder);
    const DiffOutcome& o = *m_outcome;
    int failed = 0, renamed = 0;
    for (const TensorDiff& d : o.diffs) {
        failed += !d.failure.empty();
        renamed += d.pair.a != d.pair.b;
    }
    m_view->setColumnHidden(DiffTableModel::NameBColumn, renamed == 0);
    const bool anyCodes =
        std::any_of(o.diffs.begin(), o.diffs.end(), [](const TensorDiff& d) { return d.codes.has_value(); });
    m_view->setColumnHidden(DiffTableModel::CodesColumn, !anyCodes && !o.requantized);
    fitResultColumns(m_view, {DiffTableModel::NameColumn, DiffTableModel::NameBColumn});
    QString text = tr("A: %1 — B: %2. %n pair(s) compared", nullptr, static_cast<int>(o.diffs.size()))
                       .arg(QFileInfo(qs(o.a->path())).fileName(), QFileInfo(qs(o.b->path())).fileName());
    if (o.requantized) text += tr(", A re-quantized with the current spec and its codes compared with B's");
    if (failed) text += tr(", %n could not be (listed first, reason in the Note column)", nullptr, failed);
    text += QLatin1Char('.');
    if (!o.match.onlyA.empty())
        text += tr(" Only in A (%1): %2.").arg(o.match.onlyA.size()).arg(listed(o.match.onlyA));
    if (!o.match.onlyB.empty())
        text += tr(" Only in B (%1): %2.").arg(o.match.onlyB.size()).arg(listed(o.match.onlyB));
    m_summary->setText(text);
    m_save->setEnabled(true);
    if (m_model->rowCount() > 0) m_view->selectRow(0);
}

void DiffPage::clear(const QString& message) {
    m_outcome.reset();
    m_model->setOutcome(nullptr);
    m_save->setEnabled(false);
    m_summary->setText(message);
    m_plot->clearGraphs();
    PlotPage::setTitle(m_plot, QString());
    m_plot->replot();
    m_note->clear();
}

void DiffPage::showRow(int row) {
    if (row < 0 || row >= m_model->rowCount()) return;
    const TensorDiff& d = m_model->diffAt(row);
    m_plot->clearGraphs();
    const QString title = d.pair.a == d.pair.b ? qs(d.pair.a) : tr("%1 ~ %2").arg(qs(d.pair.a), qs(d.pair.b));
    PlotPage::setTitle(m_plot, title);
    if (d.failure.empty()) {
        PlotPage::addHistogram(m_plot, d.error, QColor(200, 80, 40), tr("A − B"));
        m_plot->rescaleAxes();
        // Identical tensors: one bar at zero, on an axis that reads as such (not ±1e-30).
        if (d.stats.maxAbsError() == 0) m_plot->xAxis->setRange(-1, 1);
        m_note->setText(tr("SQNR %1 dB, max |A−B| %2, max %3 ULP, cosine %4.")
                            .arg(fmtNumber(d.stats.sqnrDb()), fmtNumber(d.stats.maxAbsError()))
                            .arg(d.maxUlp)
                            .arg(fmtNumber(d.stats.cosine(), 7)) +
                        codesText(d) +
                        (d.note.empty() ? QString() : QLatin1Char(' ') + qs(d.note) + QLatin1Char('.')));
    } else {
        m_note->setText(tr("Could not compare: %1").arg(qs(d.failure)));
    }
    m_plot->replot();
}

bool DiffPage::requantize() const {
    return m_requantize->isChecked();
}

void DiffPage::setRequantize(bool on) {
    m_requantize->setChecked(on);
}

bool DiffPage::writeReport(const QString& path, QString* error) const {
    if (!m_outcome) return false;
    return writeTextFile(
        path, m_outcome->report().dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
        error);
}

void DiffPage::chooseTarget() {
    if (!m_bench->source())
        return m_bench->showMessage(tr("Open a model file first (Ctrl+O): it is A, the reference."), true);
    const QString path = QFileDialog::getOpenFileName(this, tr("Diff against (B)"), {}, modelFileFilter());
    if (!path.isEmpty()) diffAgainst(path);
}

bool DiffPage::diffAgainst(const QString& path) {
    const std::shared_ptr<const TensorSource>& a = m_bench->source();
    if (!a) {
        m_bench->showMessage(tr("Open a model file first (Ctrl+O): it is A, the reference."), true);
        return false;
    }
    m_bench->showMessage(tr("Comparing %1 with %2…").arg(qs(a->path()), path), false);
    std::optional<JobRequest> requantize;
    try {
        if (this->requantize()) requantize = m_bench->request();
    } catch (const std::exception& e) {
        m_bench->showMessage(tr("Cannot re-quantize A with these settings:\n%1").arg(qs(e.what())), true);
        return false;
    }
    JobHandle* job = m_bench->runner()->run(
        [a, b = ss(path), requantize](const ProgressFn& fn) { return runDiffJob(a, b, fn, requantize); });
    job->onFinished<DiffOutcome>(this, [this](std::shared_ptr<const DiffOutcome> o) {
        const auto failed = std::count_if(o->diffs.begin(), o->diffs.end(),
                                          [](const TensorDiff& d) { return !d.failure.empty(); });
        setOutcome(std::move(o));
        m_bench->raise(this);
        m_bench->showMessage(failed ? tr("%n pair(s) could not be compared: the reasons are in the Diff tab.",
                                         nullptr, static_cast<int>(failed))
                                    : QString(),
                             failed > 0);
        emit shown();
        m_bench->endJob(QString());
    });
    return true;
}

} // namespace ql
