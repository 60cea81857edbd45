#include "widgets/workbench.h"

#include "widgets/config_panel.h"
#include "widgets/job_runner.h"
#include "widgets/qt_util.h"

#include <QFileInfo>

namespace ql {

Workbench::Workbench(std::shared_ptr<const BackendRegistry> registry, ConfigPanel* config, QObject* parent)
    : QObject(parent)
    , m_registry(std::move(registry))
    , m_config(config)
    , m_runner(new JobRunner(this)) {
    // However a job of the main lane ends, short of its result, the message bar says so.
    connect(m_runner, &JobRunner::started, this, [this](JobHandle* job) {
        connect(job, &JobHandle::failed, this, [this](const QString& why) {
            showMessage(why, true);
            endJob(why);
        });
        connect(job, &JobHandle::cancelled, this, [this] {
            showMessage(tr("Cancelled; the pages keep the last finished result."), false);
            endJob(tr("cancelled"));
        });
    });
}

void Workbench::setSource(std::shared_ptr<const TensorSource> source) {
    m_runner->cancel();
    m_source = std::move(source);
    m_config->setAxisChosen(false); // an axis picked for another model's tensors is not this one's
    emit sourceChanged();
}

QString Workbench::fileName() const {
    return m_source ? QFileInfo(qs(m_source->path())).fileName() : QString();
}

bool Workbench::openImportance(const QString& path) {
    try {
        m_importance = Importance::open(ss(path));
    } catch (const std::exception& e) {
        showMessage(tr("Could not read the importance file %1:\n%2").arg(path, qs(e.what())), true);
        return false;
    }
    const ImportanceFile& f = m_importance->file();
    showMessage(
        tr("Importance: %1 (%2, %3 entries). Runs now report the weighted SQNR of each layer's output and "
           "rank by it; plans weigh their error with it.")
            .arg(QFileInfo(path).fileName(), qs(f.format))
            .arg(f.entries.size()),
        false);
    return true;
}

JobRequest Workbench::request() const {
    JobRequest r;
    r.source = m_source;
    r.registry = m_registry;
    r.spec = m_config->spec();
    // Each tensor along its own role's axes unless the user picked one (quantlens-cli without --axis):
    // the plan the panel shows, for a tensor run alone, Quantize all, a diff's requantize and the model.
    r.roleAxes = !m_config->axisChosen();
    r.backend = m_config->backend();
    r.compare = m_config->compare();
    r.params = m_config->paramFiles();
    r.importance = m_importance;
    return r;
}

bool Workbench::refuseOverInputs(const JobRequest& r,
                                 const std::vector<std::pair<std::string, std::string>>& outputs) {
    try {
        refuseOutputsOverInputs(r, outputs);
    } catch (const std::exception& e) {
        showMessage(qs(e.what()), true);
        return true;
    }
    return false;
}

} // namespace ql
