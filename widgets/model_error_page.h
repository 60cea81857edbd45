#pragma once
// The Model tab: the open ONNX model run through ONNX Runtime in float and with its weights
// quantized by the current spec (core/runtime's evaluate job), on random samples or an inputs file.
// The graph outputs' error (SQNR, cosine, max |Δ|, top-1/top-5/KL for class scores), the per-layer
// error by graph order (cumulative: every weight quantized; local: only that node's), and the
// weights ranked by how much quantizing each alone costs the outputs. Clicking a layer asks for its
// weight in the tensor browser.
#include "runtime/evaluate_job.h"

#include <QWidget>
#include <memory>

class QCheckBox;
class QCustomPlot;
class QLabel;
class QLineEdit;
class QPushButton;
class QRadioButton;
class QSpinBox;
class QTableWidget;

namespace ql {

class Workbench;

class ModelErrorPage : public QWidget {
    Q_OBJECT
public:
    ModelErrorPage(Workbench* bench, QWidget* parent);

    /// Runs the open ONNX model with the current spec and the inputs chosen on the page; false +
    /// message (on the page and the message bar) when it cannot start.
    bool runModel();
    /// Random inputs: `samples` samples drawn with `seed` (the inputs file is cleared).
    void setRandomInputs(int samples, quint64 seed);
    /// Inputs from a .safetensors / .npz file of named inputs, first axis the samples.
    void setInputsFile(const QString& path);
    /// Dynamic input dimensions for random inputs: "NAME=N, NAME=N".
    void setDims(const QString& dims);
    void setSensitivity(bool on);

    /// Shows a finished evaluation.
    void setOutcome(std::shared_ptr<const EvaluateOutcome> outcome);
    /// Forgets the results and shows `message`.
    void clear(const QString& message);
    std::shared_ptr<const EvaluateOutcome> outcome() const { return m_outcome; }
    /// The layer at `index` (graph order) chosen: its first quantized weight is asked for
    /// (weightActivated); false when it reads none.
    bool activateLayer(int index);

    QTableWidget* outputsTable() const { return m_outputs; }
    QTableWidget* sensitivityTable() const { return m_sensitivity; }
    QCustomPlot* plot() const { return m_plot; }
    QLabel* summary() const { return m_summary; }
    QLabel* note() const { return m_note; }
    QPushButton* runButton() const { return m_run; }

signals:
    /// A result is on the page.
    void shown();
    /// A layer (or a ranked weight) was clicked: select this weight.
    void weightActivated(const QString& name);

private:
    EvaluateOptions options() const;
    void fillOutputs();
    void fillSensitivity();
    void drawLayers();

    Workbench* m_bench;
    std::shared_ptr<const EvaluateOutcome> m_outcome;
    QPushButton* m_run;
    QPushButton* m_cancel;
    QRadioButton* m_random;
    QSpinBox* m_samples;
    QSpinBox* m_seed;
    QRadioButton* m_fromFile;
    QLineEdit* m_inputs;
    QPushButton* m_browse;
    QLineEdit* m_dims;
    QCheckBox* m_sensitivityBox;
    QLabel* m_summary;
    QTableWidget* m_outputs;
    QTableWidget* m_sensitivity;
    QCustomPlot* m_plot;
    QLabel* m_note;
};

} // namespace ql
