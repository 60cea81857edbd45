#include "widgets/config_panel.h"

#include "base/error.h"
#include "quant/weight_view.h"
#include "widgets/qt_util.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>

namespace ql {
namespace {

template <typename E> void fillEnum(QComboBox* box, int count) {
    for (int i = 0; i < count; ++i)
        box->addItem(qs(nameOf(static_cast<E>(i))), i);
}

template <typename E> E current(const QComboBox* box) {
    return static_cast<E>(box->currentData().toInt());
}

void select(QComboBox* box, const QVariant& data) {
    const int i = box->findData(data);
    if (i >= 0) box->setCurrentIndex(i);
}

QComboBox* combo(QWidget* parent, const QString& tip) {
    auto* b = new QComboBox(parent);
    b->setToolTip(tip);
    // Narrow docks: a box may shrink to ten characters (its list still shows whole names).
    b->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    b->setMinimumContentsLength(10);
    return b;
}

} // namespace

ConfigPanel::ConfigPanel(std::shared_ptr<const BackendRegistry> registry, QWidget* parent)
    : QWidget(parent)
    , m_registry(std::move(registry)) {
    buildControls();
    setSpec(QuantSpec{});
}

void ConfigPanel::buildControls() {
    m_preset =
        combo(this, tr("Operator whose exact arithmetic and constraints to reproduce (torch, TensorRT, "
                       "Ascend aclnn, torch_npu, PyPTO, OCP MX, NVFP4) or custom"));
    fillEnum<Preset>(m_preset, static_cast<int>(allPresets().size()));
    m_scheme =
        combo(this, tr("How scales map onto the tensor: one per tensor, per channel along the axis, per "
                       "group of N elements along the axis, per block, or ragged groups of rows"));
    fillEnum<Scheme>(m_scheme, 5);
    m_axis = combo(this, tr("The axis that gets its own scales (channel axis), or along which groups run"));
    m_target = combo(this, tr("Code type the weights are quantized to"));
    fillEnum<Target>(m_target, 8);
    m_groupSize = new QSpinBox(this);
    m_groupSize->setRange(1, 1 << 20);
    m_groupSize->setToolTip(tr("Elements per group along the axis (per-group scheme), e.g. 128 for g128"));
    m_block = new QLineEdit(this);
    m_block->setToolTip(
        tr("Block scheme: N elements per block along the axis, or R,C for 2-D blocks (128,128)"));
    m_groupEnds = new QLineEdit(this);
    m_groupEnds->setToolTip(tr("Ragged scheme: where each group of indices along the axis ends, cumulative, "
                               "as npu_group_quant's group_index (e.g. 3,7,8: groups [0,3) [3,7) [7,8)); the "
                               "last equals the axis size"));
    m_symmetric = new QCheckBox(tr("Symmetric"), this);
    m_symmetric->setToolTip(
        tr("Symmetric: zero point 0 and range ±max; unchecked: asymmetric with a zero point"));
    m_narrow = new QCheckBox(tr("Narrow range"), this);
    m_narrow->setToolTip(tr("Drop the most negative code of signed targets ([-127, 127] for int8)"));
    m_calibration =
        combo(this, tr("How scales come from the data: absmax, min-max, percentile clip, MSE-optimal "
                       "clip search, entropy (KL) threshold, or scales read from a file"));
    fillEnum<CalibMethod>(m_calibration, 6);
    m_percentile = new QDoubleSpinBox(this);
    m_percentile->setRange(50, 100);
    m_percentile->setDecimals(3);
    m_percentile->setToolTip(tr("Percentile of |x| to clip at (percentile calibration)"));
    m_scaleRef = new QLineEdit(this);
    m_scaleRef->setPlaceholderText(tr("FILE:TENSOR"));
    m_scaleRef->setToolTip(tr("Calibration \"file\": the operator's own scales, one per scale group, as "
                              "FILE:TENSOR (safetensors or HDF5), e.g. scales.safetensors:fc1.weight_scale"));
    m_zeroPointRef = new QLineEdit(this);
    m_zeroPointRef->setPlaceholderText(tr("FILE:TENSOR (optional)"));
    m_zeroPointRef->setToolTip(tr("Calibration \"file\", asymmetric: the zero points as FILE:TENSOR"));

    m_scaleOp = combo(this, tr("How the scale is applied (fixed by the preset; editable for custom)"));
    fillEnum<ScaleOp>(m_scaleOp, 4);
    m_zeroStage = combo(this, tr("Whether the zero point is added before or after rounding"));
    fillEnum<ZeroPointStage>(m_zeroStage, 2);
    m_rounding =
        combo(this, tr("Rounding mode (editable for ascend-quant and custom; other presets fix it)"));
    fillEnum<Rounding>(m_rounding, 5);
    m_overflow = combo(this, tr("What values beyond the target's range become"));
    m_overflow->addItem(tr("saturate"), static_cast<int>(Overflow::Saturate));
    m_overflow->addItem(tr("NaN / Inf"), static_cast<int>(Overflow::NonSaturating));

    m_backend = combo(this, tr("Backend that runs job A"));
    m_compare =
        combo(this, tr("Optionally run B on another backend or with another preset, and compare codes"));
    m_compare->addItem(tr("no comparison"), QString());
    auto* backends = qobject_cast<QStandardItemModel*>(m_backend->model());
    for (const auto& b : m_registry->backends()) {
        const QString name = qs(b->name());
        m_backend->addItem(name, name);
        const auto why = b->unavailableReason();
        if (why) {
            backends->item(m_backend->count() - 1)->setEnabled(false);
            m_backend->setItemData(m_backend->count() - 1, qs(*why), Qt::ToolTipRole);
        } else {
            m_backend->setItemData(m_backend->count() - 1, qs(b->deviceDescription()), Qt::ToolTipRole);
            m_compare->addItem(tr("backend B: %1").arg(name), QString(QStringLiteral("backend:") + name));
        }
    }
    // Device backends come first in the registry; start on the first one that can run now (CPU
    // at worst), never on an unavailable one.
    for (int i = 0; i < m_backend->count(); ++i)
        if (backends->item(i)->isEnabled()) {
            m_backend->setCurrentIndex(i);
            break;
        }
    for (const PresetInfo& p : allPresets())
        m_compare->addItem(tr("preset B: %1").arg(qs(p.name)),
                           QString(QStringLiteral("preset:") + qs(p.name)));

    m_details = new QLabel(this);
    m_details->setTextFormat(Qt::PlainText); // plan notes and reasons quote names: never read as HTML
    m_details->setWordWrap(true);
    m_details->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_details->setToolTip(
        tr("What the plan resolved: scale shape, code type, packing and the operator's notes"));
    m_status = new QLabel(this);
    m_status->setTextFormat(Qt::PlainText);
    m_status->setWordWrap(true);
    m_status->setToolTip(tr("Whether this combination can run on the selected tensor, and why not"));

    auto* spec = new QGroupBox(tr("Quantization"), this);
    auto* form = new QFormLayout(spec);
    form->addRow(tr("Preset"), m_preset);
    form->addRow(tr("Target"), m_target);
    form->addRow(tr("Scheme"), m_scheme);
    form->addRow(tr("Axis"), m_axis);
    form->addRow(tr("Group size"), m_groupSize);
    form->addRow(tr("Block"), m_block);
    form->addRow(tr("Group ends"), m_groupEnds);
    auto* flags = new QHBoxLayout;
    flags->addWidget(m_symmetric);
    flags->addWidget(m_narrow);
    form->addRow(flags);
    form->addRow(tr("Calibration"), m_calibration);
    form->addRow(tr("Percentile"), m_percentile);
    form->addRow(tr("Scales"), m_scaleRef);
    form->addRow(tr("Zero points"), m_zeroPointRef);

    auto* conv = new QGroupBox(tr("Convention"), this);
    auto* cform = new QFormLayout(conv);
    cform->addRow(tr("Scale op"), m_scaleOp);
    cform->addRow(tr("Zero point"), m_zeroStage);
    cform->addRow(tr("Rounding"), m_rounding);
    cform->addRow(tr("Overflow"), m_overflow);
    cform->addRow(m_details);

    auto* run = new QGroupBox(tr("Backends"), this);
    auto* rform = new QFormLayout(run);
    rform->addRow(tr("Backend A"), m_backend);
    rform->addRow(tr("Compare"), m_compare);
    m_includeNonWeights = new QCheckBox(tr("Include biases and norms"), this);
    m_includeNonWeights->setToolTip(
        tr("Quantize all, its export and the plan also quantize biases, norm and scale vectors and "
           "scalars (quantlens-cli --include-non-weights); otherwise they are kept as they are and "
           "listed"));
    rform->addRow(m_includeNonWeights);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    // What to run and on what above the convention it implies: at 1280x800 Compare and the status
    // line are in view without scrolling.
    layout->addWidget(spec);
    layout->addWidget(run);
    layout->addWidget(m_status);
    layout->addWidget(conv);
    layout->addStretch(1);

    const auto changed = [this] {
        if (!m_updating) revalidate();
    };
    for (QComboBox* b :
         {m_target, m_calibration, m_scaleOp, m_zeroStage, m_rounding, m_overflow, m_backend, m_compare})
        connect(b, &QComboBox::currentIndexChanged, this, changed);
    connect(m_preset, &QComboBox::currentIndexChanged, this, [this] {
        if (m_updating) return;
        steerToPreset();
        revalidate();
    });
    connect(m_scheme, &QComboBox::currentIndexChanged, this, [this] {
        if (m_updating) return;
        // A picked axis moves with the scheme: groups and blocks to the last axis, channels to axis 0.
        // Without one, revalidate shows the axis the tensor's role gives the new scheme.
        const auto s = current<Scheme>(m_scheme);
        if (m_axisChosen && !m_shape.empty())
            m_axis->setCurrentIndex(s == Scheme::PerGroup || s == Scheme::Block ? m_axis->count() - 1 : 0);
        if (s == Scheme::Ragged && m_groupEnds->text().isEmpty() && !m_shape.empty()) {
            // A starting point to edit: the rows in two groups.
            const std::int64_t rows = m_shape.front();
            m_groupEnds->setText(rows > 1 ? QStringLiteral("%1,%2").arg(rows / 2).arg(rows)
                                          : QString::number(rows));
        }
        revalidate();
    });
    // Until the user picks an axis the plan takes the role's, whatever the box held; a pick (activated
    // comes after the index changed) makes the box's axis the plan's.
    connect(m_axis, &QComboBox::currentIndexChanged, this, [this] {
        if (!m_updating && m_axisChosen) revalidate();
    });
    connect(m_axis, &QComboBox::activated, this, [this] { setAxisChosen(true); });
    setAxisChosen(false);
    connect(m_groupSize, &QSpinBox::valueChanged, this, changed);
    connect(m_percentile, &QDoubleSpinBox::valueChanged, this, changed);
    connect(m_block, &QLineEdit::editingFinished, this, changed);
    connect(m_groupEnds, &QLineEdit::editingFinished, this, changed);
    connect(m_scaleRef, &QLineEdit::editingFinished, this, changed);
    connect(m_zeroPointRef, &QLineEdit::editingFinished, this, changed);
    connect(m_symmetric, &QCheckBox::toggled, this, changed);
    connect(m_narrow, &QCheckBox::toggled, this, changed);
}

void ConfigPanel::setShape(const Shape& shape, const std::optional<RoleAxes>& role) {
    m_updating = true;
    const int axis = m_axis->currentData().isValid() ? m_axis->currentData().toInt() : 0;
    m_shape = shape;
    m_role = role ? *role : weightRole(std::string(), shape);
    m_axis->clear();
    for (std::size_t d = 0; d < shape.size(); ++d)
        m_axis->addItem(tr("%1 (size %2)").arg(d).arg(shape[d]), static_cast<int>(d));
    if (shape.empty()) m_axis->addItem(tr("0 (scalar)"), 0);
    m_axis->setCurrentIndex(std::clamp(axis, 0, m_axis->count() - 1));
    m_updating = false;
    revalidate();
}

QuantSpec ConfigPanel::spec() const {
    QuantSpec s;
    s.preset = current<Preset>(m_preset);
    s.target = current<Target>(m_target);
    s.scheme = current<Scheme>(m_scheme);
    s.axes = {m_axis->currentData().isValid() ? m_axis->currentData().toInt() : 0};
    s.groupSize = m_groupSize->value();
    s.block.clear();
    for (const QString& part : m_block->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool ok = false;
        const qlonglong n = part.trimmed().toLongLong(&ok);
        s.block.push_back(ok ? n : 0); // 0 is refused by the plan with a reason
    }
    if (s.scheme == Scheme::Ragged) {
        for (const QString& part : m_groupEnds->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
            bool ok = false;
            const qlonglong n = part.trimmed().toLongLong(&ok);
            s.groupEnds.push_back(ok ? n : -1); // -1 is refused by the plan with a reason
        }
    }
    s.symmetric = m_symmetric->isChecked();
    s.narrowRange = m_narrow->isChecked();
    s.calibration.method = current<CalibMethod>(m_calibration);
    s.calibration.percentile = m_percentile->value();
    if (s.preset == Preset::AscendQuant) s.rounding = current<Rounding>(m_rounding);
    if (s.preset == Preset::Custom) {
        Convention c = conventionOf(QuantSpec{});
        c.scaleOp = current<ScaleOp>(m_scaleOp);
        c.zeroPoint = current<ZeroPointStage>(m_zeroStage);
        c.rounding = current<Rounding>(m_rounding);
        c.overflow = current<Overflow>(m_overflow);
        s.custom = c;
        s.rounding = c.rounding;
    }
    return s;
}

void ConfigPanel::setSpec(const QuantSpec& s) {
    m_updating = true;
    select(m_preset, static_cast<int>(s.preset));
    select(m_target, static_cast<int>(s.target));
    select(m_scheme, static_cast<int>(s.scheme));
    if (!s.axes.empty()) select(m_axis, s.axes.front());
    m_groupSize->setValue(static_cast<int>(s.groupSize));
    QStringList block;
    for (auto b : s.block)
        block << QString::number(b);
    m_block->setText(block.isEmpty() ? QStringLiteral("128") : block.join(QLatin1Char(',')));
    QStringList ends;
    for (auto e : s.groupEnds)
        ends << QString::number(e);
    m_groupEnds->setText(ends.join(QLatin1Char(',')));
    m_symmetric->setChecked(s.symmetric);
    m_narrow->setChecked(s.narrowRange);
    select(m_calibration, static_cast<int>(s.calibration.method));
    m_percentile->setValue(s.calibration.percentile);
    if (s.custom) showConvention(*s.custom);
    if (s.rounding) select(m_rounding, static_cast<int>(*s.rounding));
    m_updating = false;
    revalidate();
}

std::string ConfigPanel::backend() const {
    return ss(m_backend->currentData().toString());
}
void ConfigPanel::setBackend(const std::string& name) {
    select(m_backend, qs(name));
}

CompareWith ConfigPanel::compare() const {
    const QString d = m_compare->currentData().toString();
    CompareWith c;
    if (d.startsWith(QStringLiteral("backend:"))) {
        c.kind = CompareWith::Kind::Backend;
        c.backend = ss(d.mid(8));
    } else if (d.startsWith(QStringLiteral("preset:"))) {
        c.kind = CompareWith::Kind::Preset;
        c.preset = presetFromName(ss(d.mid(7))).value_or(Preset::Torch);
    }
    return c;
}

void ConfigPanel::setCompare(const CompareWith& c) {
    switch (c.kind) {
    case CompareWith::Kind::None:
        m_compare->setCurrentIndex(0);
        break;
    case CompareWith::Kind::Backend:
        select(m_compare, QString(QStringLiteral("backend:") + qs(c.backend)));
        break;
    case CompareWith::Kind::Preset:
        select(m_compare, QString(QStringLiteral("preset:") + qs(nameOf(c.preset))));
        break;
    }
}

void ConfigPanel::showConvention(const Convention& c) {
    const bool was = m_updating;
    m_updating = true;
    select(m_scaleOp, static_cast<int>(c.scaleOp));
    select(m_zeroStage, static_cast<int>(c.zeroPoint));
    select(m_rounding, static_cast<int>(c.rounding));
    select(m_overflow, static_cast<int>(c.overflow));
    m_updating = was;
}

void ConfigPanel::steerToPreset() {
    // MX and NVFP4 are blocks with their own element types: choosing one moves the scheme and target
    // there, as the CLI's defaults do, instead of showing an error to fix; the blocks run along the
    // role's reduction axis, or a picked axis moves to the last.
    const auto p = current<Preset>(m_preset);
    if (!isBlockFormat(p)) return;
    const bool was = m_updating;
    m_updating = true;
    select(m_scheme, static_cast<int>(Scheme::Block));
    if (m_axisChosen && m_axis->count() > 0) m_axis->setCurrentIndex(m_axis->count() - 1);
    const PresetInfo& format = presetInfo(p);
    if (!format.targets[static_cast<std::size_t>(current<Target>(m_target))])
        select(m_target, static_cast<int>(format.defaultTarget));
    if (current<CalibMethod>(m_calibration) != CalibMethod::Mse)
        select(m_calibration, static_cast<int>(CalibMethod::AbsMax));
    m_updating = was;
}

void ConfigPanel::updateEnabled() {
    const auto p = current<Preset>(m_preset);
    const auto s = current<Scheme>(m_scheme);
    const bool custom = p == Preset::Custom;
    for (QWidget* w : {static_cast<QWidget*>(m_scaleOp), static_cast<QWidget*>(m_zeroStage),
                       static_cast<QWidget*>(m_overflow)})
        w->setEnabled(custom);
    m_rounding->setEnabled(custom || p == Preset::AscendQuant);
    m_axis->setEnabled(s != Scheme::PerTensor);
    m_groupSize->setEnabled(s == Scheme::PerGroup);
    const bool fixedBlock = isBlockFormat(p); // MX and NVFP4: the format's own, shown but not editable
    m_block->setEnabled(s == Scheme::Block && !fixedBlock);
    if (fixedBlock) m_block->setText(QString::number(presetInfo(p).formatBlock));
    m_groupEnds->setEnabled(s == Scheme::Ragged);
    m_percentile->setEnabled(current<CalibMethod>(m_calibration) == CalibMethod::Percentile);
    const bool fromFile = current<CalibMethod>(m_calibration) == CalibMethod::Explicit;
    m_scaleRef->setEnabled(fromFile);
    m_zeroPointRef->setEnabled(fromFile && !m_symmetric->isChecked());
}

void ConfigPanel::showRoleAxis(const QuantSpec& spec) {
    if (m_axisChosen || m_axis->count() == 0) return;
    const QuantSpec own = specForRole(spec, m_role);
    if (own.axes.empty()) return;
    const bool was = m_updating;
    m_updating = true;
    select(m_axis, own.axes.front());
    m_updating = was;
}

ResolvedSpec ConfigPanel::planFor(const QuantSpec& spec) const {
    // As a run plans it (job/job.h planForTensor): the role's axes, or the user's as given.
    return m_axisChosen ? planAsGiven(spec, m_shape) : planForRole(spec, m_shape, m_role);
}

void ConfigPanel::revalidate() {
    updateEnabled();
    showRoleAxis(spec());
    const QuantSpec s = spec();
    m_plan.reset();
    m_problem.clear();
    if (m_shape.empty() && m_axis->count() == 0) {
        m_problem = tr("Select a tensor to plan against.");
    } else {
        try {
            m_plan = planFor(s);
        } catch (const std::exception& e) {
            m_problem = qs(e.what());
        }
    }
    if (m_plan) {
        if (s.preset != Preset::Custom) showConvention(m_plan->convention);
        const Backend* b = m_registry->find(backend());
        if (b)
            if (auto why = b->supports(*m_plan))
                m_problem = tr("Backend %1 cannot run this: %2").arg(qs(b->name()), qs(*why));
        // Side B is checked here too, so a comparison that cannot run is said before Ctrl+R.
        const CompareWith with = compare();
        if (with.kind == CompareWith::Kind::Preset && m_problem.isEmpty()) {
            QuantSpec b = s;
            b.preset = with.preset;
            try {
                const ResolvedSpec planB = planFor(b);
                if (const Backend* backendA = m_registry->find(backend()))
                    if (auto why = backendA->supports(planB))
                        m_problem = tr("Preset B (%1): backend %2 cannot run it: %3")
                                        .arg(qs(nameOf(b.preset)), qs(backendA->name()), qs(*why));
            } catch (const std::exception& e) {
                m_problem =
                    tr("Preset B (%1) cannot run this spec: %2").arg(qs(nameOf(b.preset)), qs(e.what()));
            }
        }
        if (with.kind == CompareWith::Kind::Backend && m_problem.isEmpty()) {
            const Backend* backendB = m_registry->find(with.backend);
            if (!backendB)
                m_problem = tr("Backend B %1 is not in this build.").arg(qs(with.backend));
            else if (auto why = backendB->supports(*m_plan))
                m_problem = tr("Backend B %1 cannot run this: %2").arg(qs(backendB->name()), qs(*why));
        }
        if (s.calibration.method == CalibMethod::Explicit && !parseTensorRef(paramFiles().scales))
            m_problem =
                tr("Calibration \"file\" needs the %1 scales as FILE:TENSOR.").arg(m_plan->scaleCount);
        QString packing = m_plan->convention.packing == Packing::None
                              ? tr("none")
                              : (m_plan->convention.packing == Packing::NibblesFlat ? tr("two per byte")
                                                                                    : tr("eight per int32"));
        QString text = tr("Scales %1 (%2 groups), codes %3 in [%4, %5], packing %6.")
                           .arg(qs(toString(m_plan->scaleShape)))
                           .arg(m_plan->scaleCount)
                           .arg(qs(nameOf(m_plan->codeTarget)))
                           .arg(m_plan->qmin())
                           .arg(m_plan->qmax())
                           .arg(packing);
        if (!m_axisChosen && s.scheme != Scheme::PerTensor) // where the axis came from; a pick overrides it
            text += QStringLiteral("\n") +
                    tr("Axes from its role (pick an axis to override): %1").arg(qs(describe(m_role)));
        if (!m_plan->notes.empty()) text += QStringLiteral("\n") + qs(m_plan->notes);
        m_details->setText(text);
    } else {
        m_details->setText(tr("—"));
    }
    if (m_problem.isEmpty()) {
        m_status->setStyleSheet(QStringLiteral("color: palette(text);"));
        m_status->setText(tr("✓ %1").arg(qs(describe(s))));
    } else {
        m_status->setStyleSheet(QStringLiteral("color: #b00020;"));
        m_status->setText(m_problem);
    }
    emit specChanged();
}

bool ConfigPanel::includeNonWeights() const {
    return m_includeNonWeights->isChecked();
}

void ConfigPanel::setIncludeNonWeights(bool include) {
    m_includeNonWeights->setChecked(include);
}

void ConfigPanel::setAxisChosen(bool chosen) {
    m_axisChosen = chosen;
    m_axis->setToolTip(
        chosen ? tr("The axis that gets its own scales (channel axis), or along which groups run; every run, "
                    "Quantize all too, applies it to every tensor")
               : tr("The axis that gets its own scales (channel axis), or along which groups run: shown here "
                    "as the tensor's role gives it (a Linear's, a conv's), which every run uses, each tensor "
                    "its own, until you pick one"));
    if (!m_updating) revalidate(); // the plan takes the box's axis, or again the role's
}

ParamFiles ConfigPanel::paramFiles() const {
    if (current<CalibMethod>(m_calibration) != CalibMethod::Explicit) return {};
    return {m_scaleRef->text().trimmed().toStdString(),
            m_symmetric->isChecked() ? std::string() : m_zeroPointRef->text().trimmed().toStdString()};
}

void ConfigPanel::setParamFiles(const ParamFiles& files) {
    m_scaleRef->setText(qs(files.scales));
    m_zeroPointRef->setText(qs(files.zeroPoints));
    revalidate();
}

} // namespace ql
