#include "widgets/job_runner.h"

#include "base/error.h"
#include "job/plan_output.h"
#include "widgets/qt_util.h"

#include <QPointer>
#include <QUnhandledException>
#include <QtConcurrent>

namespace ql {

JobRunner::JobRunner(QObject* parent)
    : QObject(parent) {}

JobRunner::~JobRunner() {
    if (m_cancel) m_cancel->store(true);
    ++*m_live; // makes every worker's progress reports no-ops
    QThreadPool::globalInstance()->waitForDone();
}

JobRunner::Flag JobRunner::beginJob() {
    if (m_cancel) m_cancel->store(true);
    ++m_generation;
    ++m_previewGeneration; // a run's result supersedes any preview still on its way
    m_live->store(m_generation);
    m_lastPercent->store(-1);
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    return m_cancel;
}

ProgressFn JobRunner::progressFn(quint64 generation, const Flag& cancel) {
    // Runs on the worker: forwards whole-percent changes to the GUI thread through a queued call
    // whose context is this runner (dropped if the runner is gone); reads the cancel flag.
    QPointer<JobRunner> self(this);
    auto live = m_live;
    auto last = m_lastPercent;
    return [self, generation, cancel, live, last](double done) {
        const int percent = static_cast<int>(done * 100);
        if (live->load() == generation && last->exchange(percent) != percent && self)
            QMetaObject::invokeMethod(
                self.data(),
                [self, generation, percent] {
                    if (self && self->m_generation == generation) emit self->progress(percent);
                },
                Qt::QueuedConnection);
        return !cancel->load();
    };
}

void JobRunner::setBusy(bool busy) {
    if (m_busy == busy) return;
    m_busy = busy;
    emit busyChanged(busy);
}

template <typename T, typename Work, typename Done>
void JobRunner::launch(const quint64* counter, Work work, Done done) {
    const quint64 generation = *counter;
    const bool isRun = counter == &m_generation;
    QtConcurrent::run(std::move(work)).then(this, [this, counter, generation, isRun, done](QFuture<T> f) {
        // A job that finishes before then() is attached would run this synchronously inside
        // start*(); queue it so results always arrive from the event loop, after start*() returns.
        QMetaObject::invokeMethod(
            this,
            [this, counter, generation, isRun, done, f]() mutable {
                if (generation != *counter) return; // superseded: a newer job owns the pages
                if (isRun) setBusy(false);
                std::shared_ptr<const T> result;
                try {
                    try {
                        result = std::make_shared<const T>(f.result());
                    } catch (const QUnhandledException& wrapped) {
                        // QtConcurrent wraps exceptions that are not QExceptions; unwrap the real one.
                        if (wrapped.exception()) std::rethrow_exception(wrapped.exception());
                        throw;
                    }
                } catch (const Cancelled&) {
                    emit cancelled();
                    return;
                } catch (const std::exception& e) {
                    emit failed(qs(e.what()));
                    return;
                }
                done(std::move(result));
            },
            Qt::QueuedConnection);
    });
}

void JobRunner::startTensor(const JobRequest& request, const std::string& tensor) {
    const Flag cancel = beginJob();
    setBusy(true);
    emit progress(0);
    ProgressFn fn = progressFn(m_generation, cancel);
    launch<TensorOutcome>(
        &m_generation, [request, tensor, fn] { return runTensorJob(request, tensor, fn); },
        [this](std::shared_ptr<const TensorOutcome> o) { emit tensorFinished(std::move(o)); });
}

void JobRunner::startModel(const JobRequest& request) {
    const Flag cancel = beginJob();
    setBusy(true);
    emit progress(0);
    ProgressFn fn = progressFn(m_generation, cancel);
    const ModelEvents events = modelEvents(fn);
    auto work = [request, events] {
        ModelJobOptions options;
        options.keepCodes = true; // for File ▸ Export
        return runModelJob(request, selectTensors(*request.source, {{}, {}, true}), options, events);
    };
    launch<ModelOutcome>(&m_generation, work,
                         [this](std::shared_ptr<const ModelOutcome> o) { emit modelFinished(std::move(o)); });
}

// Progress over a run of tensors: tensor `index` of `total`, `done` within it.
ModelEvents JobRunner::modelEvents(const ProgressFn& fn) {
    auto current = std::make_shared<std::pair<int, int>>(0, 1);
    ModelEvents events;
    events.started = [current](int index, int total, const std::string&) {
        *current = {index, std::max(total, 1)};
    };
    events.progress = [fn, current](double done) { return fn((current->first + done) / current->second); };
    return events;
}

void JobRunner::startPlan(const JobRequest& request, const std::vector<PlanCandidate>& candidates) {
    const Flag cancel = beginJob();
    setBusy(true);
    emit progress(0);
    const ModelEvents events = modelEvents(progressFn(m_generation, cancel));
    auto work = [request, candidates, events] {
        return measurePlan(request, selectTensors(*request.source, {{}, {}, true}), candidates, events);
    };
    launch<PlanMeasurements>(&m_generation, work, [this](std::shared_ptr<const PlanMeasurements> m) {
        emit planMeasured(std::move(m));
    });
}

void JobRunner::startPlanExport(const JobRequest& request, std::shared_ptr<const PlanMeasurements> m,
                                const PlanResult& r, const std::string& path) {
    const Flag cancel = beginJob();
    setBusy(true);
    emit progress(0);
    const ModelEvents events = modelEvents(progressFn(m_generation, cancel));
    auto work = [request, m, r, path, events] { return exportPlan(request, *m, r, path, events); };
    launch<int>(&m_generation, work,
                [this, path](std::shared_ptr<const int> n) { emit planExported(qs(path), *n); });
}

void JobRunner::startExport(const JobRequest& request, const std::string& tensor,
                            const ExportTarget& target) {
    const Flag cancel = beginJob();
    setBusy(true);
    emit progress(0);
    const ModelEvents events = modelEvents(progressFn(m_generation, cancel));
    auto work = [request, tensor, target, events] {
        const bool all = tensor.empty();
        const auto names = all ? selectTensors(*request.source, {{}, {}, true}) : std::vector{tensor};
        ModelOutcome outcome = runModelJob(request, names, exportJobOptions(target, all), events);
        if (!all && outcome.quantized.empty() && !outcome.reports.empty() &&
            !outcome.reports[0].error.empty())
            throw FileError(target.path + ": not written: " + outcome.reports[0].error);
        exportOutcome(outcome, target);
        outcome.quantized.clear(); // written: the window keeps the reports only
        outcome.kept.clear();
        return outcome;
    };
    launch<ModelOutcome>(&m_generation, work,
                         [this, path = target.path](std::shared_ptr<const ModelOutcome> o) {
                             emit exported(qs(path), std::move(o));
                         });
}

void JobRunner::startDiff(std::shared_ptr<const TensorSource> a, const std::string& pathB,
                          std::optional<JobRequest> requantize) {
    const Flag cancel = beginJob();
    setBusy(true);
    emit progress(0);
    ProgressFn fn = progressFn(m_generation, cancel);
    launch<DiffOutcome>(
        &m_generation, [a, pathB, fn, requantize] { return runDiffJob(a, pathB, fn, requantize); },
        [this](std::shared_ptr<const DiffOutcome> o) { emit diffFinished(std::move(o)); });
}

void JobRunner::startPreview(std::shared_ptr<const TensorSource> source, const std::string& tensor) {
    // Previews have their own generation: a newer selection supersedes them, but they never
    // cancel a run (browsing while "Quantize all" works is fine).
    ++m_previewGeneration;
    launch<ValuePreview>(
        &m_previewGeneration, [source, tensor] { return previewValues(*source, tensor); },
        [this](std::shared_ptr<const ValuePreview> p) { emit previewReady(std::move(p)); });
}

void JobRunner::cancel() {
    if (!m_busy) return;
    if (m_cancel) m_cancel->store(true);
    // The job's own continuation would report it; a stuck device must not keep the UI busy, so
    // the runner moves on now and drops whatever the job delivers later.
    ++m_generation;
    m_live->store(m_generation);
    setBusy(false);
    emit cancelled();
}

} // namespace ql
