#pragma once
// The Diff tab: the open model (A) against another checkpoint of it (B: its GGUF, its ONNX QDQ
// model, a compressed-tensors export, or another export), tensor by tensor, worst first; the selected
// pair's error histogram below, and the diff saved as the report `quantlens-cli check` gates.
#include "job/diff_job.h"

#include <QWidget>
#include <memory>

class QCheckBox;
class QCustomPlot;
class QLabel;
class QPushButton;
class QTableView;

namespace ql {

class DiffTableModel;
class Workbench;

class DiffPage : public QWidget {
    Q_OBJECT
public:
    DiffPage(Workbench* bench, QWidget* parent);

    /// Asks for B in a file dialog, then diffs the open model against it.
    void chooseTarget();
    /// Starts diffing the open model (A) against the checkpoint at `path` (B); false + message when
    /// no model is open.
    bool diffAgainst(const QString& path);

    /// Shows a finished diff, worst pair selected.
    void setOutcome(std::shared_ptr<const DiffOutcome> outcome);
    /// Forgets the diff (another model was opened) and shows `message`.
    void clear(const QString& message);
    std::shared_ptr<const DiffOutcome> outcome() const { return m_outcome; }
    /// Draws the pair in `row` of the table (as sorted).
    void showRow(int row);

    /// Whether the next diff re-quantizes A with the current spec and compares its codes with B's.
    bool requantize() const;
    void setRequantize(bool on);

    /// Writes the diff report (as `quantlens-cli diff --report`); false with the reason on failure.
    bool writeReport(const QString& path, QString* error = nullptr) const;

    DiffTableModel* model() const { return m_model; }
    QTableView* view() const { return m_view; }
    QCustomPlot* plot() const { return m_plot; }
    QLabel* summary() const { return m_summary; }
    QLabel* note() const { return m_note; }

signals:
    /// A diff's result is on the page.
    void shown();

private:
    Workbench* m_bench;
    std::shared_ptr<const DiffOutcome> m_outcome;
    QPushButton* m_choose;
    QCheckBox* m_requantize;
    QPushButton* m_save;
    QLabel* m_summary;
    DiffTableModel* m_model;
    QTableView* m_view;
    QCustomPlot* m_plot;
    QLabel* m_note;
};

} // namespace ql
