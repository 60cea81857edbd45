#pragma once
// What every page of the window shares: the open model, the request the configuration panel
// describes, the importance file runs weigh their error with, the job runner, and the window's
// message bar. A page takes the workbench, starts its own jobs and shows its own results; the window
// only registers it.
#include "backend/registry.h"
#include "job/importance.h"
#include "job/job.h"

#include <QObject>
#include <QString>
#include <memory>
#include <string>
#include <utility>
#include <vector>

class QWidget;

namespace ql {

class ConfigPanel;
class JobRunner;

class Workbench : public QObject {
    Q_OBJECT
public:
    Workbench(std::shared_ptr<const BackendRegistry> registry, ConfigPanel* config, QObject* parent);

    const std::shared_ptr<const BackendRegistry>& registry() const { return m_registry; }
    ConfigPanel* config() const { return m_config; }
    JobRunner* runner() const { return m_runner; }
    /// The open model; null before one is opened.
    const std::shared_ptr<const TensorSource>& source() const { return m_source; }
    /// Makes `source` the open model: the running job is cancelled and every page is told
    /// (sourceChanged) to forget the previous model's results.
    void setSource(std::shared_ptr<const TensorSource> source);
    /// The file name of the open model (for the pages' messages); empty before one is opened.
    QString fileName() const;
    /// Activation statistics every later run and plan weighs its error with. False + message on
    /// failure (the previous file stays).
    bool openImportance(const QString& path);
    /// A run of the open model with the panel's settings and the importance file.
    JobRequest request() const;

    /// Shows `text` in the message bar (empty: hides it).
    void showMessage(const QString& text, bool error) { emit message(text, error); }
    /// Shows `text` in the status bar for a while.
    void showStatus(const QString& text) { emit status(text); }
    /// A job's work is done (empty) or failed or was cancelled (the reason).
    void endJob(const QString& why) { emit jobEnded(why); }
    /// Brings `page` to the front (a result just arrived on it).
    void raise(QWidget* page) { emit raiseRequested(page); }
    /// Refuses (message, true) when any of `outputs` (path, what) is or would replace an input of `r`.
    bool refuseOverInputs(const JobRequest& r,
                          const std::vector<std::pair<std::string, std::string>>& outputs);

signals:
    /// Another model was opened (source() is it).
    void sourceChanged();
    void message(const QString& text, bool error);
    void status(const QString& text);
    void jobEnded(const QString& why);
    void raiseRequested(QWidget* page);

private:
    std::shared_ptr<const BackendRegistry> m_registry;
    ConfigPanel* m_config;
    JobRunner* m_runner;
    std::shared_ptr<const TensorSource> m_source;
    std::shared_ptr<const Importance> m_importance;
};

} // namespace ql
