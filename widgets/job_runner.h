#pragma once
// Runs quantization jobs off the GUI thread (DESIGN "Long work"): QtConcurrent::run(...).then(this, ...)
// with a generation counter, so a superseded job's late result is dropped, and a std::atomic<bool>
// cancel flag the core ProgressFn reads. No processEvents loops.
#include "job/diff_job.h"
#include "job/export_outcome.h"
#include "job/job.h"
#include "job/plan_job.h"

#include <QObject>
#include <QString>
#include <atomic>
#include <memory>
#include <optional>

namespace ql {

class JobRunner : public QObject {
    Q_OBJECT
public:
    explicit JobRunner(QObject* parent = nullptr);
    /// Cancels whatever runs and waits for it, so no worker outlives the runner.
    ~JobRunner() override;

    /// Each start supersedes (and cancels) the job before it.
    void startTensor(const JobRequest& request, const std::string& tensor);
    /// Every tensor of the file; the codes are kept for an export.
    void startModel(const JobRequest& request);
    void startPreview(std::shared_ptr<const TensorSource> source, const std::string& tensor);
    /// Measures every 2-D weight of the file under each candidate (job/plan_job.h).
    void startPlan(const JobRequest& request, const std::vector<PlanCandidate>& candidates);
    /// Writes the plan's compressed-tensors checkpoint to `path`.
    void startPlanExport(const JobRequest& request, std::shared_ptr<const PlanMeasurements> m,
                         const PlanResult& r, const std::string& path);
    /// Runs the request for an export to `target` and writes it (job/export_outcome.h): every tensor
    /// of the file (those the target cannot store passed through), or the one named `tensor` (which
    /// then fails instead). Delivers the run's outcome without its codes, so the table and report
    /// show what the export holds.
    void startExport(const JobRequest& request, const std::string& tensor, const ExportTarget& target);
    /// Diffs the model `a` against the checkpoint at `pathB` (job/diff_job.h).
    void startDiff(std::shared_ptr<const TensorSource> a, const std::string& pathB,
                   std::optional<JobRequest> requantize = {});
    bool isBusy() const { return m_busy; }
    /// The generation of the latest job (tests check that stale ones are dropped).
    quint64 generation() const { return m_generation; }

public slots:
    void cancel();

signals:
    void busyChanged(bool busy);
    void progress(int percent);
    void tensorFinished(std::shared_ptr<const ql::TensorOutcome> outcome);
    void modelFinished(std::shared_ptr<const ql::ModelOutcome> outcome);
    void previewReady(std::shared_ptr<const ql::ValuePreview> preview);
    void planMeasured(std::shared_ptr<const ql::PlanMeasurements> measurements);
    void planExported(const QString& path, int quantized);
    void exported(const QString& path, std::shared_ptr<const ql::ModelOutcome> outcome);
    void diffFinished(std::shared_ptr<const ql::DiffOutcome> outcome);
    void failed(const QString& message);
    void cancelled();

private:
    using Flag = std::shared_ptr<std::atomic<bool>>;
    /// Bumps the generation, cancels the running job, returns the new job's flag.
    Flag beginJob();
    ProgressFn progressFn(quint64 generation, const Flag& cancel);
    static ModelEvents modelEvents(const ProgressFn& fn);
    template <typename T, typename Work, typename Done>
    void launch(const quint64* counter, Work work, Done done);
    void setBusy(bool busy);

    quint64 m_generation = 0;
    Flag m_cancel;
    bool m_busy = false;
    quint64 m_previewGeneration = 0;
    std::shared_ptr<std::atomic<int>> m_lastPercent = std::make_shared<std::atomic<int>>(-1);
    std::shared_ptr<std::atomic<quint64>> m_live = std::make_shared<std::atomic<quint64>>(0);
};

} // namespace ql
