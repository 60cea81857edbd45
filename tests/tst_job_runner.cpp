// The job runner's promises, one by one: a result arrives typed through its handle, after run()
// returns; a superseded or cancelled job's late result never lands; a failure carries the reason; a
// destroyed receiver gets nothing; a preview never cancels a run, but a run supersedes a preview.
#include "base/error.h"
#include "widgets/job_runner.h"

#include <QSignalSpy>
#include <QTest>
#include <QThreadPool>
#include <atomic>
#include <memory>
#include <thread>

using namespace ql;

namespace {

// Work that reports progress until `release` is set (or it is cancelled), then returns `value`.
auto waitingWork(const std::shared_ptr<std::atomic<bool>>& release, int value) {
    return [release, value](const ProgressFn& fn) {
        double done = 0;
        while (!release->load()) {
            done = done < 0.9 ? done + 0.01 : done;
            if (!fn(done)) throw Cancelled();
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        return value;
    };
}

// Counts a handle's finished signals (the result's type is the job's business).
std::shared_ptr<int> countFinished(JobHandle* job) {
    auto n = std::make_shared<int>(0);
    QObject::connect(job, &JobHandle::finished, [n](const std::any&) { ++*n; });
    return n;
}

// Lets every worker finish and delivers what they queued.
void drain() {
    QTRY_COMPARE_WITH_TIMEOUT(QThreadPool::globalInstance()->activeThreadCount(), 0, 30000);
    QCoreApplication::sendPostedEvents();
    QCoreApplication::processEvents();
}

} // namespace

class TestJobRunner : public QObject {
    Q_OBJECT
private slots:
    void deliversTheTypedResultAfterRunReturns() {
        JobRunner runner;
        QObject receiver;
        JobHandle* job = runner.run([](const ProgressFn&) { return std::string("done"); });
        QVERIFY(runner.isBusy());
        QCOMPARE(runner.current(), job);
        std::string got;
        job->onFinished<std::string>(&receiver,
                                     [&got](const std::shared_ptr<const std::string>& r) { got = *r; });
        QTRY_COMPARE_WITH_TIMEOUT(got, std::string("done"), 30000);
        QVERIFY(!runner.isBusy());
        QVERIFY(!runner.current());
    }

    void progressReachesTheHandle() {
        JobRunner runner;
        auto release = std::make_shared<std::atomic<bool>>(false);
        JobHandle* job = runner.run(waitingWork(release, 1));
        QSignalSpy progress(job, &JobHandle::progress);
        const auto finished = countFinished(job);
        QTRY_VERIFY_WITH_TIMEOUT(progress.count() >= 2, 30000);
        for (const auto& args : progress)
            QVERIFY(args.at(0).toDouble() >= 0 && args.at(0).toDouble() <= 1);
        release->store(true);
        QTRY_COMPARE_WITH_TIMEOUT(*finished, 1, 30000);
    }

    void supersededResultNeverLands() {
        JobRunner runner;
        QObject receiver;
        auto release = std::make_shared<std::atomic<bool>>(false);
        std::vector<int> got;
        JobHandle* first = runner.run(waitingWork(release, 1));
        first->onFinished<int>(&receiver, [&got](const std::shared_ptr<const int>& r) { got.push_back(*r); });
        const quint64 before = runner.generation();
        JobHandle* second = runner.run([](const ProgressFn&) { return 2; });
        QVERIFY(runner.generation() > before);
        second->onFinished<int>(&receiver,
                                [&got](const std::shared_ptr<const int>& r) { got.push_back(*r); });
        release->store(true); // had the first not seen its cancel flag, it would return now
        QTRY_COMPARE_WITH_TIMEOUT(got.size(), std::size_t(1), 30000);
        drain();
        QCOMPARE(got, std::vector<int>{2});
    }

    void failureCarriesTheReason() {
        JobRunner runner;
        JobHandle* job =
            runner.run([](const ProgressFn&) -> int { throw FileError("model.gguf: truncated"); });
        QSignalSpy failed(job, &JobHandle::failed);
        const auto finished = countFinished(job);
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 30000);
        QCOMPARE(failed.first().at(0).toString(), QStringLiteral("model.gguf: truncated"));
        QCOMPARE(*finished, 0);
        QVERIFY(!runner.isBusy());
    }

    void cancelSaysSoAndDropsTheLateResult() {
        JobRunner runner;
        auto release = std::make_shared<std::atomic<bool>>(false);
        JobHandle* job = runner.run([release](const ProgressFn& fn) {
            while (!release->load())
                std::this_thread::sleep_for(std::chrono::milliseconds(2)); // never reads the flag: stuck
            (void)fn(1);
            return 1;
        });
        QSignalSpy cancelled(job, &JobHandle::cancelled);
        const auto finished = countFinished(job);
        QSignalSpy busy(&runner, &JobRunner::busyChanged);
        runner.cancel();
        QCOMPARE(cancelled.count(), 1); // at once, though the work is stuck
        QCOMPARE(busy.count(), 1);
        QVERIFY(!runner.isBusy());
        release->store(true);
        drain();
        QCOMPARE(*finished, 0);
        QCOMPARE(cancelled.count(), 1);
    }

    void destroyedReceiverGetsNothing() {
        JobRunner runner;
        auto release = std::make_shared<std::atomic<bool>>(false);
        auto calls = std::make_shared<int>(0);
        auto* receiver = new QObject;
        JobHandle* job = runner.run(waitingWork(release, 1));
        job->onFinished<int>(receiver, [calls](const std::shared_ptr<const int>&) { ++*calls; });
        const auto finished = countFinished(job);
        delete receiver;
        release->store(true);
        QTRY_COMPARE_WITH_TIMEOUT(*finished, 1, 30000); // delivered, to nobody
        QCOMPARE(*calls, 0);
    }

    void previewNeverCancelsARunButARunSupersedesAPreview() {
        JobRunner runner;
        QObject receiver;
        auto release = std::make_shared<std::atomic<bool>>(false);
        int run = 0, preview = 0;
        JobHandle* main = runner.run(waitingWork(release, 1));
        main->onFinished<int>(&receiver, [&run](const std::shared_ptr<const int>& r) { run = *r; });
        JobHandle* p = runner.run([](const ProgressFn&) { return 7; }, JobRunner::Lane::Preview);
        p->onFinished<int>(&receiver, [&preview](const std::shared_ptr<const int>& r) { preview = *r; });
        QTRY_COMPARE_WITH_TIMEOUT(preview, 7, 30000);
        QVERIFY(runner.isBusy()); // the run goes on
        release->store(true);
        QTRY_COMPARE_WITH_TIMEOUT(run, 1, 30000);

        // A preview still on its way when a run starts is dropped.
        auto slow = std::make_shared<std::atomic<bool>>(false);
        preview = 0;
        JobHandle* late = runner.run(waitingWork(slow, 8), JobRunner::Lane::Preview);
        late->onFinished<int>(&receiver, [&preview](const std::shared_ptr<const int>& r) { preview = *r; });
        QVERIFY(!runner.isBusy()); // a preview is not a run
        JobHandle* next = runner.run([](const ProgressFn&) { return 3; });
        next->onFinished<int>(&receiver, [&run](const std::shared_ptr<const int>& r) { run = *r; });
        slow->store(true);
        QTRY_COMPARE_WITH_TIMEOUT(run, 3, 30000);
        drain();
        QCOMPARE(preview, 0);
    }
};

QTEST_MAIN(TestJobRunner)
#include "tst_job_runner.moc"
