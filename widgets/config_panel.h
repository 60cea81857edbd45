#pragma once
// The configuration panel: builds a QuantSpec from controls, plans it for the selected tensor as
// a run does (until the user picks an axis, through the tensor's role: quant/weight_view.h
// planForRole; then along that axis, as given), and shows either the convention the plan implies or
// why the combination is impossible (the QuantError message), inline.
#include "backend/registry.h"
#include "job/job.h"
#include "quant/resolved_spec.h"
#include "quant/weight_role.h"

#include <QWidget>
#include <memory>
#include <optional>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace ql {

class ConfigPanel : public QWidget {
    Q_OBJECT
public:
    explicit ConfigPanel(std::shared_ptr<const BackendRegistry> registry, QWidget* parent = nullptr);

    /// The tensor the spec is planned against (axis choices follow its dimensions) and its role in
    /// its model (job/job.h roleOf); without one, the role its shape alone implies. Until the user
    /// picks an axis, the plan and the axis shown are the role's, as the run's (JobRequest::roleAxes).
    void setShape(const Shape& shape, const std::optional<RoleAxes>& role = std::nullopt);
    QuantSpec spec() const;
    void setSpec(const QuantSpec& spec);
    std::string backend() const;
    void setBackend(const std::string& name);
    CompareWith compare() const;
    void setCompare(const CompareWith& compare);
    /// The scale / zero-point tensors named for calibration "file" (empty otherwise).
    ParamFiles paramFiles() const;
    void setParamFiles(const ParamFiles& files);
    /// Whole-model runs (Quantize all, their export, the plan) also quantize biases, norm and scale
    /// vectors and scalars, as quantlens-cli --include-non-weights; off by default: weights only.
    bool includeNonWeights() const;
    void setIncludeNonWeights(bool include);
    /// True once the user picked an axis (since the last setAxisChosen(false): a model opened). Runs
    /// then apply it to every tensor, as quantlens-cli --axis; otherwise each tensor takes its own
    /// role's axes, as the CLI without --axis, and the axis box shows them.
    bool axisChosen() const { return m_axisChosen; }
    void setAxisChosen(bool chosen);

    /// The plan for the current spec and shape, or nullopt with problem() saying why.
    const std::optional<ResolvedSpec>& plan() const { return m_plan; }
    QString problem() const { return m_problem; }

    // Controls, for tests that drive the panel like a user.
    QComboBox* presetBox() const { return m_preset; }
    QComboBox* schemeBox() const { return m_scheme; }
    QComboBox* targetBox() const { return m_target; }
    QComboBox* axisBox() const { return m_axis; }
    QComboBox* compareBox() const { return m_compare; }
    QComboBox* backendBox() const { return m_backend; }
    QSpinBox* groupSizeBox() const { return m_groupSize; }
    QLineEdit* groupEndsEdit() const { return m_groupEnds; }
    QLineEdit* blockEdit() const { return m_block; }
    QComboBox* calibrationBox() const { return m_calibration; }
    QLineEdit* scaleRefEdit() const { return m_scaleRef; }
    QCheckBox* includeNonWeightsBox() const { return m_includeNonWeights; }
    QLabel* statusLabel() const { return m_status; }
    /// What the plan resolved, with the operator's notes (core's preset notes, as the CLI prints them).
    QLabel* detailsLabel() const { return m_details; }

signals:
    /// Any control changed; plan() and problem() are already updated.
    void specChanged();

private:
    void buildControls();
    void revalidate();
    /// While no axis is chosen: the axis box shows the axis the role gives `spec`.
    void showRoleAxis(const QuantSpec& spec);
    /// `spec` planned for the tensor as a run with the panel's settings plans it.
    ResolvedSpec planFor(const QuantSpec& spec) const;
    void updateEnabled();
    void steerToPreset();
    void showConvention(const Convention& c);

    std::shared_ptr<const BackendRegistry> m_registry;
    Shape m_shape;
    RoleAxes m_role;
    std::optional<ResolvedSpec> m_plan;
    QString m_problem;
    bool m_updating = false;
    bool m_axisChosen = false;

    QComboBox* m_preset;
    QComboBox* m_scheme;
    QComboBox* m_axis;
    QComboBox* m_target;
    QSpinBox* m_groupSize;
    QLineEdit* m_block;
    QLineEdit* m_groupEnds;
    QCheckBox* m_symmetric;
    QCheckBox* m_narrow;
    QComboBox* m_calibration;
    QDoubleSpinBox* m_percentile;
    QLineEdit* m_scaleRef;
    QLineEdit* m_zeroPointRef;
    QComboBox* m_scaleOp;
    QComboBox* m_zeroStage;
    QComboBox* m_rounding;
    QComboBox* m_overflow;
    QComboBox* m_backend;
    QComboBox* m_compare;
    QCheckBox* m_includeNonWeights;
    QLabel* m_details;
    QLabel* m_status;
};

} // namespace ql
