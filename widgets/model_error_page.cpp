#include "widgets/model_error_page.h"

#include "io/model_formats.h"
#include "io/tensor_source.h"
#include "widgets/job_runner.h"
#include "widgets/plot_page.h"
#include "widgets/qcp.h"
#include "widgets/qt_util.h"
#include "widgets/result_table.h"
#include "widgets/workbench.h"

#include <QCheckBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>
#include <limits>

namespace ql {
namespace {

enum OutputColumn { OutName, OutSqnr, OutCosine, OutMaxAbs, OutTop1, OutTop5, OutKl };
enum RankColumn { RankNumber, RankWeight, RankSqnr, RankCosine, RankMaxAbs };

QTableWidget* resultTable(const QStringList& headers, QWidget* parent) {
    auto* t = new QTableWidget(0, static_cast<int>(headers.size()), parent);
    t->setHorizontalHeaderLabels(headers);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    styleResultTable(t);
    t->setSelectionMode(QAbstractItemView::SingleSelection);
    return t;
}

void setCell(QTableWidget* t, int row, int column, const QString& text, const QString& tip = {}) {
    auto* item = new QTableWidgetItem(text);
    if (column > 0) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    item->setToolTip(plainToolTip(tip.isEmpty() ? text : tip));
    t->setItem(row, column, item);
}

QString percent(double share) {
    return QString::number(100 * share, 'f', 1) + QLatin1Char('%');
}

// A finite SQNR to draw; NaN (a gap) where the layer has no error at all (before the first weight).
double drawable(double db) {
    return std::isfinite(db) ? db : std::numeric_limits<double>::quiet_NaN();
}

QString layerText(const LayerMetrics& l, int index) {
    QString text = ModelErrorPage::tr("Layer %1: %2 (%3), output %4: cumulative %5 dB, cosine %6")
                       .arg(index)
                       .arg(qs(l.node), qs(l.opType), qs(l.output), fmtNumber(l.cumulative.sqnrDb),
                            fmtNumber(l.cumulative.cosine, 7));
    if (l.local) text += ModelErrorPage::tr("; local %1 dB").arg(fmtNumber(l.local->sqnrDb));
    QStringList weights;
    for (const auto& w : l.weights)
        weights << qs(w);
    text += weights.isEmpty() ? ModelErrorPage::tr("; reads no quantized weight.")
                              : ModelErrorPage::tr("; weights: %1.").arg(weights.join(QStringLiteral(", ")));
    return text;
}

} // namespace

ModelErrorPage::ModelErrorPage(Workbench* bench, QWidget* parent)
    : QWidget(parent)
    , m_bench(bench)
    , m_run(new QPushButton(tr("Run model"), this))
    , m_cancel(new QPushButton(tr("Cancel"), this))
    , m_random(new QRadioButton(tr("Random samples:"), this))
    , m_samples(new QSpinBox(this))
    , m_seed(new QSpinBox(this))
    , m_fromFile(new QRadioButton(tr("Inputs file:"), this))
    , m_inputs(new QLineEdit(this))
    , m_browse(new QPushButton(tr("Browse…"), this))
    , m_dims(new QLineEdit(this))
    , m_sensitivityBox(new QCheckBox(tr("Sensitivity ranking"), this))
    , m_summary(new QLabel(this))
    , m_outputs(resultTable(
          {tr("Output"), tr("SQNR dB"), tr("Cosine"), tr("Max |Δ|"), tr("Top-1"), tr("Top-5"), tr("KL")},
          this))
    , m_sensitivity(
          resultTable({tr("Rank"), tr("Weight"), tr("Output SQNR dB"), tr("Cosine"), tr("Max |Δ|")}, this))
    , m_plot(new QCustomPlot(this))
    , m_note(new QLabel(this)) {
    m_run->setToolTip(tr("Run the open ONNX model through ONNX Runtime in float and with its weights "
                         "quantized by the preset and settings on the right, on the same inputs"));
    connect(m_run, &QPushButton::clicked, this, &ModelErrorPage::runModel);
    m_cancel->setToolTip(tr("Stop the run (Esc); the page keeps the last finished result"));
    m_cancel->setEnabled(false);
    connect(m_cancel, &QPushButton::clicked, bench->runner(), &JobRunner::cancel);
    connect(bench->runner(), &JobRunner::busyChanged, m_cancel, &QPushButton::setEnabled);
    m_random->setChecked(true);
    m_random->setToolTip(tr("Inputs drawn from a standard normal distribution, shaped as the model "
                            "declares them: they measure less than real inputs do"));
    m_samples->setRange(1, 10000);
    m_samples->setValue(4);
    m_samples->setToolTip(tr("How many samples (each one run of the model per layer measured)"));
    m_seed->setRange(0, std::numeric_limits<int>::max());
    m_seed->setPrefix(tr("seed "));
    m_seed->setToolTip(tr("The random inputs' seed: the same seed, the same inputs"));
    m_fromFile->setToolTip(
        tr("A .safetensors or .npz file of the model's named inputs, first axis the samples"));
    m_inputs->setPlaceholderText(tr("inputs.safetensors / .npz"));
    connect(m_inputs, &QLineEdit::textEdited, this, [this] { m_fromFile->setChecked(true); });
    connect(m_browse, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Model inputs"), {},
                                                          tr("Inputs (*.safetensors *.npz);;All files (*)"));
        if (!path.isEmpty()) setInputsFile(path);
    });
    m_dims->setPlaceholderText(tr("dynamic dims: NAME=N, …"));
    m_dims->setToolTip(tr("Sizes of the inputs' dynamic dimensions for random samples, by name "
                          "(a dynamic first one is 1): e.g. height=48, width=192"));
    m_sensitivityBox->setToolTip(tr("Also quantize one weight at a time and rank the weights by the "
                                    "outputs' SQNR (one more run per weight and sample)"));

    m_samples->setMaximumWidth(90);
    m_seed->setMaximumWidth(130);
    auto* controls = new QHBoxLayout;
    controls->addWidget(m_run);
    controls->addWidget(m_cancel);
    controls->addWidget(m_sensitivityBox);
    controls->addSpacing(12);
    controls->addWidget(m_fromFile);
    controls->addWidget(m_inputs, 1);
    controls->addWidget(m_browse);
    auto* inputs = new QHBoxLayout;
    inputs->addWidget(m_random);
    inputs->addWidget(m_samples);
    inputs->addWidget(m_seed);
    inputs->addWidget(m_dims, 1);

    for (QLabel* label : {m_summary, m_note}) {
        label->setTextFormat(Qt::PlainText); // quotes names from files: never read as HTML
        label->setWordWrap(true);
        label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    }
    m_outputs->setToolTip(tr("The graph outputs' error over every sample: the float model against the one "
                             "with quantized weights; top-1/top-5/KL for class scores"));
    m_sensitivity->setToolTip(tr("Each weight quantized alone, the most sensitive (lowest output SQNR) "
                                 "first; click one to select it in the tensor browser"));
    connect(m_sensitivity, &QTableWidget::cellClicked, this, [this](int row, int) {
        if (const QTableWidgetItem* item = m_sensitivity->item(row, RankWeight))
            emit weightActivated(item->data(Qt::UserRole).toString());
    });

    m_plot->setMinimumSize(280, 160); // the tables scroll sideways first
    m_plot->plotLayout()->insertRow(0);
    m_plot->plotLayout()->addElement(
        0, 0, new QCPTextElement(m_plot, QString(), QFont(font().family(), 10, QFont::Bold)));
    m_plot->xAxis->setLabel(tr("layer (graph order)"));
    m_plot->yAxis->setLabel(tr("SQNR (dB)"));
    // The legend in a row of its own below the axes: the points fill the whole width.
    m_plot->legend->setVisible(true);
    m_plot->axisRect()->insetLayout()->take(m_plot->legend);
    m_plot->plotLayout()->addElement(2, 0, m_plot->legend);
    m_plot->plotLayout()->setRowStretchFactor(2, 0.001);
    m_plot->legend->setFillOrder(QCPLegend::foColumnsFirst);
    m_plot->legend->setBorderPen(Qt::NoPen);
    m_plot->legend->setMargins(QMargins(4, 0, 4, 2));
    m_plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    PlotPage::fitTicksOnReplot(m_plot);
    m_plot->setToolTip(tr("Each node output's error by graph order: cumulative (every weight quantized) "
                          "and local (only that node's weights); click a layer to select its weight"));
    connect(m_plot, &QCustomPlot::plottableClick, this, [this](QCPAbstractPlottable* p, int dataIndex) {
        auto* graph = qobject_cast<QCPGraph*>(p);
        if (!graph || dataIndex < 0 || dataIndex >= graph->dataCount()) return;
        activateLayer(static_cast<int>(std::lround((graph->data()->begin() + dataIndex)->key)));
    });

    auto* tables = new QSplitter(Qt::Vertical, this);
    tables->addWidget(m_outputs);
    tables->addWidget(m_sensitivity);
    tables->setStretchFactor(0, 1);
    tables->setStretchFactor(1, 2);
    auto* right = new QWidget(this);
    auto* rightLayout = new QVBoxLayout(right);
    rightLayout->setContentsMargins(0, 0, 0, 0);
    rightLayout->addWidget(m_plot, 1);
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(tables);
    split->addWidget(right);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setSizes({600, 400});
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addLayout(controls);
    layout->addLayout(inputs);
    layout->addWidget(m_summary);
    layout->addWidget(split, 1);
    layout->addWidget(m_note);

    connect(bench, &Workbench::sourceChanged, this, [this] {
        clear(tr("Run %1 through ONNX Runtime, float against quantized weights: Run model.")
                  .arg(m_bench->fileName()));
    });
    clear(tr("Open an ONNX model (Ctrl+O), then Run model: its outputs and every layer, float against "
             "quantized weights, through ONNX Runtime."));
}

void ModelErrorPage::setRandomInputs(int samples, quint64 seed) {
    m_random->setChecked(true);
    m_samples->setValue(samples);
    m_seed->setValue(static_cast<int>(seed));
}

void ModelErrorPage::setInputsFile(const QString& path) {
    m_inputs->setText(path);
    m_fromFile->setChecked(true);
}

void ModelErrorPage::setDims(const QString& dims) {
    m_dims->setText(dims);
}

void ModelErrorPage::setSensitivity(bool on) {
    m_sensitivityBox->setChecked(on);
}

EvaluateOptions ModelErrorPage::options() const {
    EvaluateOptions o;
    o.sensitivity = m_sensitivityBox->isChecked();
    if (m_fromFile->isChecked()) {
        if (m_inputs->text().trimmed().isEmpty())
            throw QuantError("choose an inputs file, or random samples");
        o.inputs = ss(m_inputs->text().trimmed());
        return o;
    }
    o.random = m_samples->value();
    o.seed = static_cast<std::uint64_t>(m_seed->value());
    for (const QString& part :
         m_dims->text().split(QRegularExpression(QStringLiteral("[,;\\s]+")), Qt::SkipEmptyParts)) {
        const qsizetype eq = part.indexOf(QLatin1Char('='));
        bool ok = false;
        const qlonglong n = eq > 0 ? part.mid(eq + 1).toLongLong(&ok) : 0;
        if (!ok || n <= 0)
            throw QuantError("dynamic dimension '" + ss(part) +
                             "': give it as NAME=N with N a positive number");
        o.dims[ss(part.left(eq))] = n;
    }
    return o;
}

bool ModelErrorPage::runModel() {
    const auto refuse = [this](const QString& why) {
        m_summary->setText(why);
        m_bench->showMessage(why, true);
        return false;
    };
    const std::shared_ptr<const TensorSource>& source = m_bench->source();
    if (!source) return refuse(tr("Open an ONNX model first (Ctrl+O)."));
    if (modelFormatOf(source->path()).name != "ONNX")
        return refuse(tr("The Model tab runs ONNX models through ONNX Runtime; %1 is not one.")
                          .arg(m_bench->fileName()));
    EvaluateOptions o;
    JobRequest request;
    try {
        o = options();
        request = m_bench->request();
    } catch (const std::exception& e) {
        return refuse(qs(e.what()));
    }
    m_bench->showMessage({}, false);
    m_summary->setText(tr("Running %1 through ONNX Runtime…").arg(m_bench->fileName()));
    JobHandle* job =
        m_bench->runner()->run([request, o](const ProgressFn& fn) { return runEvaluateJob(request, o, fn); });
    job->onFinished<EvaluateOutcome>(this, [this](std::shared_ptr<const EvaluateOutcome> outcome) {
        setOutcome(std::move(outcome));
        m_bench->raise(this);
        emit shown();
        m_bench->endJob(QString());
    });
    // The reason stays on the page too (a missing runtime says where to get it).
    connect(job, &JobHandle::failed, this,
            [this](const QString& why) { m_summary->setText(tr("The run failed: %1").arg(why)); });
    connect(job, &JobHandle::cancelled, this,
            [this] { m_summary->setText(tr("Cancelled; the tables keep the last finished result.")); });
    return true;
}

void ModelErrorPage::clear(const QString& message) {
    m_outcome.reset();
    m_summary->setText(message);
    m_outputs->setRowCount(0);
    m_sensitivity->setRowCount(0);
    m_sensitivity->setVisible(false);
    m_plot->clearGraphs();
    PlotPage::setTitle(m_plot, QString());
    m_plot->replot();
    m_note->clear();
}

void ModelErrorPage::setOutcome(std::shared_ptr<const EvaluateOutcome> outcome) {
    m_outcome = std::move(outcome);
    const EvaluateOutcome& r = *m_outcome;
    // The runtime's version; where it was loaded from in the tooltip.
    const std::string runtime = r.runtime.substr(0, r.runtime.find(" ("));
    m_summary->setToolTip(plainToolTip(qs(r.runtime)));
    QString text = qs(runtime) + QStringLiteral(". ");
    text += r.generated ? tr("%n random sample(s) (they measure less than real inputs)", nullptr, r.samples)
                        : tr("%n sample(s) from the inputs file", nullptr, r.samples);
    text += r.against.empty() ? tr("; %1 of %2 weights quantized").arg(r.quantized).arg(r.weights.size())
                              : tr("; quantized side: %1").arg(QFileInfo(qs(r.against)).fileName());
    text += tr("; %n layer(s).", nullptr, static_cast<int>(r.layers.size()));
    m_summary->setText(text);
    fillOutputs();
    fillSensitivity();
    drawLayers();
}

void ModelErrorPage::fillOutputs() {
    const auto& outputs = m_outcome->outputs;
    m_outputs->setRowCount(static_cast<int>(outputs.size()));
    bool classes = false;
    for (int row = 0; row < static_cast<int>(outputs.size()); ++row) {
        const OutputMetrics& out = outputs[static_cast<std::size_t>(row)];
        setCell(m_outputs, row, OutName, qs(out.name),
                qs(out.name + ": " + out.type + " " + toString(out.shape)));
        if (out.error.count == 0) {
            setCell(m_outputs, row, OutSqnr, tr("not compared"),
                    tr("%1 outputs are not compared").arg(qs(out.type)));
            continue;
        }
        const QString nonFinite = out.error.nonFinite ? tr(" (%n element(s) NaN or Inf, left out)", nullptr,
                                                           static_cast<int>(out.error.nonFinite))
                                                      : QString();
        setCell(m_outputs, row, OutSqnr, fmtNumber(out.error.sqnrDb),
                fmtNumber(out.error.sqnrDb, 8) + nonFinite);
        setCell(m_outputs, row, OutCosine, fmtNumber(out.error.cosine, 7));
        setCell(m_outputs, row, OutMaxAbs, fmtNumber(out.error.maxAbs));
        if (!out.classes) continue;
        classes = true;
        const QString rows =
            tr("%n row(s) of class scores, %1", nullptr, static_cast<int>(out.rows))
                .arg(out.softmaxed ? tr("softmax of the scores") : tr("scores already sum to 1"));
        setCell(m_outputs, row, OutTop1, percent(out.top1), rows);
        setCell(m_outputs, row, OutTop5, out.top5 ? percent(*out.top5) : QStringLiteral("—"), rows);
        setCell(m_outputs, row, OutKl, fmtNumber(out.kl), rows);
    }
    for (int c : {OutTop1, OutTop5, OutKl})
        m_outputs->setColumnHidden(c, !classes);
    fitResultColumns(m_outputs, {OutName});
}

void ModelErrorPage::fillSensitivity() {
    const auto& ranked = m_outcome->sensitivity;
    m_sensitivity->setVisible(!ranked.empty());
    m_sensitivity->setRowCount(static_cast<int>(ranked.size()));
    for (int row = 0; row < static_cast<int>(ranked.size()); ++row) {
        const WeightSensitivity& w = ranked[static_cast<std::size_t>(row)];
        setCell(m_sensitivity, row, RankNumber, QString::number(row + 1));
        setCell(m_sensitivity, row, RankWeight, qs(w.weight));
        m_sensitivity->item(row, RankWeight)->setData(Qt::UserRole, qs(w.weight));
        setCell(m_sensitivity, row, RankSqnr, fmtNumber(w.output.sqnrDb));
        setCell(m_sensitivity, row, RankCosine, fmtNumber(w.output.cosine, 7));
        setCell(m_sensitivity, row, RankMaxAbs, fmtNumber(w.output.maxAbs));
    }
    fitResultColumns(m_sensitivity, {RankWeight});
}

void ModelErrorPage::drawLayers() {
    const auto& layers = m_outcome->layers;
    m_plot->clearGraphs();
    QVector<double> x, cumulative, lx, local;
    for (std::size_t i = 0; i < layers.size(); ++i) {
        x << static_cast<double>(i);
        cumulative << drawable(layers[i].cumulative.sqnrDb);
        if (layers[i].local) {
            lx << static_cast<double>(i);
            local << drawable(layers[i].local->sqnrDb);
        }
    }
    QCPGraph* c = m_plot->addGraph();
    c->setName(tr("cumulative"));
    c->setPen(QPen(QColor(200, 80, 40), 1.5));
    c->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 4));
    c->setData(x, cumulative, true);
    QCPGraph* l = m_plot->addGraph();
    l->setName(tr("local"));
    l->setLineStyle(QCPGraph::lsNone);
    l->setScatterStyle(
        QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(QColor(40, 90, 190), 1.5), Qt::white, 7));
    l->setData(lx, local, true);
    PlotPage::setTitle(m_plot, tr("Error per layer"));
    m_plot->rescaleAxes();
    // Room at both ends: a point on an axis would be the axis's to click.
    const double n = static_cast<double>(layers.size()), pad = 1 + 0.04 * n;
    m_plot->xAxis->setRange(-pad, std::max(n - 1, 0.0) + pad);
    const QCPRange y = m_plot->yAxis->range();
    m_plot->yAxis->setRange(y.lower - 0.05 * y.size() - 1, y.upper + 0.05 * y.size() + 1);
    m_plot->replot();
    m_note->setText(layers.empty()
                        ? tr("No layer was measured.")
                        : tr("Click a point to select that layer's weight; layers before the first "
                             "quantized weight have no error and are not drawn."));
}

bool ModelErrorPage::activateLayer(int index) {
    if (!m_outcome || index < 0 || index >= static_cast<int>(m_outcome->layers.size())) return false;
    const LayerMetrics& l = m_outcome->layers[static_cast<std::size_t>(index)];
    m_note->setText(layerText(l, index));
    if (l.weights.empty()) return false;
    emit weightActivated(qs(l.weights.front()));
    return true;
}

} // namespace ql
