#pragma once
// Runs long work off the GUI thread: one entry, run(work) → JobHandle. The work
// runs under QtConcurrent with a ProgressFn that reports progress and reads a std::atomic<bool> cancel
// flag; its result comes back on the GUI thread through the handle. A generation counter drops a
// superseded job's late result, and a job never delivers to a handle (or runner) already gone. No
// processEvents loops.
#include "job/job.h"

#include <QObject>
#include <QString>
#include <any>
#include <atomic>
#include <functional>
#include <memory>
#include <type_traits>

namespace ql {

/// One job's results. Lives until it delivers (or is superseded), then deletes itself: connect to it
/// right after run(), with a receiver as context, and nothing reaches a receiver already destroyed.
class JobHandle : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;

    /// Calls `f(std::shared_ptr<const T>)` with the result of a job started as run(work) whose work
    /// returns T, while `context` lives.
    template <typename T, typename F> void onFinished(QObject* context, F f) {
        connect(this, &JobHandle::finished, context,
                [f = std::move(f)](const std::any& r) { f(std::any_cast<std::shared_ptr<const T>>(r)); });
    }

signals:
    /// The share done, [0, 1] (in whole percent steps).
    void progress(double done);
    /// The work's result: a std::shared_ptr<const T> (onFinished unpacks it).
    void finished(const std::any& result);
    void failed(const QString& message);
    void cancelled();
};

class JobRunner : public QObject {
    Q_OBJECT
public:
    /// A job of the main lane supersedes (and cancels) the one before it and makes the runner busy;
    /// a preview supersedes only the preview before it, and never cancels a run (browsing while
    /// "Quantize all" works is fine), but a run supersedes it.
    enum class Lane { Main, Preview };
    /// The work as the runner keeps it: its result type erased.
    using Work = std::function<std::any(const ProgressFn&)>;

    explicit JobRunner(QObject* parent = nullptr);
    /// Cancels whatever runs and waits for it, so no worker outlives the runner.
    ~JobRunner() override;

    /// Starts `work` (callable as T(const ProgressFn&), run on a worker thread; it returns its result
    /// or throws, Cancelled when the ProgressFn said so). The result arrives through the handle's
    /// signals, always from the event loop (after run() returns): finished carries a
    /// std::shared_ptr<const T>.
    template <typename F> JobHandle* run(F work, Lane lane = Lane::Main) {
        using T = std::decay_t<std::invoke_result_t<F&, const ProgressFn&>>;
        return start(
            [work = std::move(work)](const ProgressFn& fn) mutable -> std::any {
                return std::make_shared<const T>(work(fn));
            },
            lane);
    }

    bool isBusy() const { return m_busy; }
    /// The running main-lane job's handle; null when idle.
    JobHandle* current() const { return m_busy ? m_main.handle : nullptr; }
    /// The generation of the latest job (tests check that stale ones are dropped).
    quint64 generation() const { return m_main.generation; }

public slots:
    /// Cancels the main-lane job: it says cancelled now, and whatever it delivers later is dropped.
    void cancel();

signals:
    void busyChanged(bool busy);
    /// A main-lane job started (the window follows its progress and reports how it ends).
    void started(ql::JobHandle* job);

private:
    JobHandle* start(Work work, Lane lane);
    using Flag = std::shared_ptr<std::atomic<bool>>;
    struct LaneState {
        quint64 generation = 0;
        Flag cancel;
        JobHandle* handle = nullptr;
    };
    LaneState& lane(Lane l) { return l == Lane::Main ? m_main : m_preview; }
    void supersede(LaneState& s);
    ProgressFn progressFn(JobHandle* handle, Lane lane, const Flag& cancel);
    void deliver(JobHandle* handle, Lane lane, quint64 generation, const std::any& result,
                 const std::exception_ptr& error);
    void setBusy(bool busy);

    LaneState m_main;
    LaneState m_preview;
    bool m_busy = false;
    /// The main lane's generation as workers see it: a superseded job's progress reports are no-ops.
    std::shared_ptr<std::atomic<quint64>> m_live = std::make_shared<std::atomic<quint64>>(0);
};

/// Progress over a run of tensors (ModelEvents): tensor `index` of `total`, `done` within it, as one
/// share of the whole.
ModelEvents progressOverTensors(const ProgressFn& fn);

} // namespace ql
