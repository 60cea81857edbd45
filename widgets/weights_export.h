#pragma once
// File ▸ Export ▸ Quantized weights, for the whole-model table and for one tensor alike: the run is
// repeated for the target through the job runner (job/export_outcome.h), so what the target cannot
// store is decided during the run and the report says what the file holds.
#include "io/export.h"
#include "job/job.h"

#include <QString>
#include <functional>
#include <memory>

class QWidget;

namespace ql {

class Workbench;

/// The export dialog's file types: safetensors in each layout of core's table (io/export.h
/// exportLayouts, the choices quantlens-cli quantize --export-layout takes), then HDF5 where built.
QString weightsExportFilters();
/// The layout the dialog's filter `chosen` names; compressed-tensors for one that names none (HDF5).
ExportLayout layoutOfFilter(const QString& chosen);

struct WeightsExportChoice {
    QString path; // empty: cancelled
    ExportLayout layout = ExportLayout::CompressedTensors;
};
/// File ▸ Export ▸ Quantized weights: asks where, and in which layout where the file type has a choice.
WeightsExportChoice askWeightsExport(QWidget* parent);

/// Starts the export of the run `ran` to `path`: every tensor of its file (`tensor` empty; those the
/// target cannot store passed through) or the one named `tensor` (which then fails instead). Once
/// written, `written` gets the run's outcome without its codes, the message bar says what the file
/// holds, and the workbench ends the job. False + message when refused before any work (an output
/// over an input, the model's own config.json). `weightsOnly`, for every tensor: what is no weight
/// (biases, norms, scalars) is kept as it is, as the run being exported kept it. `layout`: a
/// safetensors file's (io/export.h); HDF5 has one.
bool startWeightsExport(Workbench& bench, const JobRequest& ran, const std::string& tensor,
                        const QString& path,
                        std::function<void(std::shared_ptr<const ModelOutcome>)> written = {},
                        bool weightsOnly = false, ExportLayout layout = ExportLayout::CompressedTensors);

} // namespace ql
