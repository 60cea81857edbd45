#include "widgets/weights_export.h"

#include "base/error.h"
#include "io/export_compressed_tensors.h"
#include "job/export_outcome.h"
#include "quantlens/config.h"
#include "report/model_summary.h"
#include "widgets/job_runner.h"
#include "widgets/qt_util.h"
#include "widgets/save_file.h"
#include "widgets/workbench.h"

#include <QCoreApplication>
#include <QStringList>
#include <filesystem>

namespace ql {
namespace {

QString tr(const char* text) {
    return QCoreApplication::translate("ql::WeightsExport", text);
}

QString safetensorsFilter(const ExportLayoutInfo& l) {
    return tr("safetensors, %1 layout (*.safetensors)").arg(qs(std::string(l.name)));
}

} // namespace

QString weightsExportFilters() {
    QStringList filters;
    for (const ExportLayoutInfo& l : exportLayouts())
        filters << safetensorsFilter(l);
    if (QUANTLENS_HAVE_HDF5) filters << tr("HDF5 (*.h5 *.hdf5)");
    return filters.join(QStringLiteral(";;"));
}

ExportLayout layoutOfFilter(const QString& chosen) {
    for (const ExportLayoutInfo& l : exportLayouts())
        if (chosen == safetensorsFilter(l)) return l.layout;
    return ExportLayout::CompressedTensors;
}

WeightsExportChoice askWeightsExport(QWidget* parent) {
    QString chosen;
    const QString path =
        saveFileName(parent, tr("Export quantized weights"), weightsExportFilters(), &chosen);
    return {path, layoutOfFilter(chosen)};
}

bool startWeightsExport(Workbench& bench, const JobRequest& ran, const std::string& tensor,
                        const QString& path, std::function<void(std::shared_ptr<const ModelOutcome>)> written,
                        bool weightsOnly, ExportLayout layout) {
    const ExportTarget target{ss(path), layout, ran.source->path()};
    std::vector<std::pair<std::string, std::string>> outputs{{target.path, "the export"}};
    try {
        if (!isHdf5Export(target.path) && layout == ExportLayout::CompressedTensors) { // its config.json
            (void)checkConfigTarget(target.path, target.model); // never the model's own config.json
            outputs.emplace_back(
                (std::filesystem::absolute(target.path).parent_path() / "config.json").string(),
                "the export's config.json");
        }
    } catch (const std::exception& e) {
        bench.showMessage(tr("Export failed: %1").arg(qs(e.what())), true);
        return false;
    }
    if (bench.refuseOverInputs(ran, outputs)) return false;
    bench.showMessage({}, false);
    const bool all = tensor.empty();
    JobHandle* job = bench.runner()->run([ran, tensor, target, all, weightsOnly](const ProgressFn& fn) {
        const auto names = all ? selectTensors(*ran.source, {{}, {}, true}) : std::vector{tensor};
        ModelJobOptions options = exportJobOptions(target, all);
        options.weightsOnly = all && weightsOnly; // a named tensor: as asked (as the CLI)
        ModelOutcome outcome = runModelJob(ran, names, options, progressOverTensors(fn));
        if (!all && outcome.quantized.empty() && !outcome.reports.empty() &&
            !outcome.reports[0].error.empty())
            throw FileError(target.path + ": not written: " + outcome.reports[0].error);
        if (outcome.quantized.empty() && !outcome.reports.empty()) {
            // Why nothing is in it, in the run's own reasons, and the layout that takes any name.
            std::string why = target.path + ": not written: no tensor was quantized.\n" +
                              summaryText(summarizeModel(outcome.reports, ran.source.get()));
            if (target.layout == ExportLayout::CompressedTensors && !isHdf5Export(target.path))
                why += "\nThe " + std::string(exportLayoutInfo(ExportLayout::Native).name) +
                       " layout (a file type of the export dialog) stores " +
                       std::string(exportLayoutInfo(ExportLayout::Native).description) + ".";
            throw FileError(why);
        }
        exportOutcome(outcome, target);
        outcome.quantized.clear(); // written: the window keeps the reports only
        outcome.kept.clear();
        return outcome;
    });
    const std::size_t unlisted = all ? ran.source->unlisted().size() : 0;
    job->onFinished<ModelOutcome>(&bench, [&bench, path, unlisted, written = std::move(written)](
                                              const std::shared_ptr<const ModelOutcome>& o) {
        if (written) written(o);
        const auto quantized = static_cast<int>(o->reports.size()) - o->failed - o->passedThrough;
        QString done = tr("Wrote %1 quantized tensor(s)").arg(quantized);
        if (o->passedThrough) done += tr(" and %1 kept unquantized").arg(o->passedThrough);
        if (o->failed) done += tr(" (%1 failed, listed in the file's metadata)").arg(o->failed);
        done += tr(" to %1.").arg(path);
        // As the CLI's quantize --all says: what the file holds that QuantLens does not read is not in it.
        if (unlisted)
            done +=
                tr(" %1 tensor(s) in the file are not read, so not in it (quantlens-cli inspect lists them).")
                    .arg(unlisted);
        bench.showMessage(done, false);
        bench.endJob(QString());
    });
    return true;
}

} // namespace ql
