#include "widgets/job_runner.h"

#include "base/error.h"
#include "widgets/qt_util.h"

#include <QPointer>
#include <QtConcurrent>
#include <algorithm>
#include <exception>
#include <utility>

namespace ql {
namespace {

// What a worker hands back: its result, or what it threw (rethrown on the GUI thread).
struct WorkOutcome {
    std::any result;
    std::exception_ptr error;
};

} // namespace

JobRunner::JobRunner(QObject* parent)
    : QObject(parent) {}

JobRunner::~JobRunner() {
    for (LaneState* s : {&m_main, &m_preview})
        if (s->cancel) s->cancel->store(true);
    ++*m_live; // makes every worker's progress reports no-ops
    QThreadPool::globalInstance()->waitForDone();
}

void JobRunner::supersede(LaneState& s) {
    if (s.cancel) s.cancel->store(true);
    ++s.generation; // whatever the old job delivers is dropped
    if (s.handle) s.handle->deleteLater();
    s.handle = nullptr;
}

JobHandle* JobRunner::start(Work work, Lane l) {
    if (l == Lane::Main) supersede(m_preview); // a run's result supersedes any preview on its way
    LaneState& s = lane(l);
    supersede(s);
    if (l == Lane::Main) m_live->store(s.generation);
    s.cancel = std::make_shared<std::atomic<bool>>(false);
    auto* handle = new JobHandle(this);
    s.handle = handle;
    const quint64 generation = s.generation;
    ProgressFn fn = progressFn(handle, l, s.cancel);
    QPointer<JobHandle> target(handle);
    QtConcurrent::run([work = std::move(work), fn]() mutable -> WorkOutcome {
        try {
            return {work(fn), nullptr};
        } catch (...) {
            return {{}, std::current_exception()};
        }
    }).then(this, [this, target, l, generation](const WorkOutcome& outcome) {
        // A job that finishes before then() is attached would run this synchronously inside
        // start(); queue it so results always arrive from the event loop, after start() returns.
        QMetaObject::invokeMethod(
            this,
            [this, target, l, generation, outcome] {
                deliver(target, l, generation, outcome.result, outcome.error);
            },
            Qt::QueuedConnection);
    });
    if (l == Lane::Main) {
        setBusy(true);
        emit started(handle);
    }
    return handle;
}

void JobRunner::deliver(JobHandle* handle, Lane l, quint64 generation, const std::any& result,
                        const std::exception_ptr& error) {
    LaneState& s = lane(l);
    if (!handle || generation != s.generation) return; // superseded: a newer job owns the pages
    s.handle = nullptr;
    if (l == Lane::Main) setBusy(false);
    handle->deleteLater();
    if (!error) {
        emit handle->finished(result);
        return;
    }
    try {
        std::rethrow_exception(error);
    } catch (const Cancelled&) {
        emit handle->cancelled();
    } catch (const std::exception& e) {
        emit handle->failed(qs(e.what()));
    } catch (...) {
        emit handle->failed(tr("The job failed with an unknown error."));
    }
}

ProgressFn JobRunner::progressFn(JobHandle* handle, Lane l, const Flag& cancel) {
    if (l == Lane::Preview) return [cancel](double) { return !cancel->load(); };
    // Runs on the worker: forwards whole-percent changes to the GUI thread through a queued call
    // whose context is this runner (it outlives its workers); reads the cancel flag.
    QPointer<JobRunner> self(this);
    QPointer<JobHandle> target(handle);
    const quint64 generation = m_main.generation;
    auto live = m_live;
    auto last = std::make_shared<std::atomic<int>>(-1);
    return [self, target, generation, cancel, live, last](double done) {
        const int percent = static_cast<int>(done * 100);
        if (live->load() == generation && last->exchange(percent) != percent && self)
            QMetaObject::invokeMethod(
                self.data(),
                [self, target, generation, percent] {
                    if (self && target && self->m_main.generation == generation)
                        emit target->progress(percent / 100.0);
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

void JobRunner::cancel() {
    if (!m_busy) return;
    // The job's own continuation would report it; a stuck device must not keep the UI busy, so
    // the runner moves on now and drops whatever the job delivers later.
    JobHandle* handle = m_main.handle;
    supersede(m_main);
    m_live->store(m_main.generation);
    setBusy(false);
    if (handle) emit handle->cancelled();
}

ModelEvents progressOverTensors(const ProgressFn& fn) {
    auto current = std::make_shared<std::pair<int, int>>(0, 1);
    ModelEvents events;
    events.started = [current](int index, int total, const std::string&) {
        *current = {index, std::max(total, 1)};
    };
    events.progress = [fn, current](double done) { return fn((current->first + done) / current->second); };
    return events;
}

} // namespace ql
