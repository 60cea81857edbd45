#pragma once
// quantize --shard I/N [--resume]: one part of a model run fanned out over many processes
// (a Slurm array task, a Kubernetes indexed pod). The shard runs its byte-balanced part of the
// selected tensors, journals each finished tensor beside its report, and writes a partial report
// that `quantlens-cli merge` joins with the others into the single-process report.
#include "cli/commands.h"
#include "job/job.h"
#include "job/report_journal.h"
#include "job/report_parts.h"

#include <memory>
#include <string>
#include <vector>

namespace ql::cli {

class ShardRun {
public:
    /// Checks the flags (--report .json is required; --out must be .safetensors), splits the
    /// selection and opens the journal (reading it back with --resume). Throws UsageError/FileError.
    ShardRun(const QuantizeOptions& o, const JobRequest& request, const std::vector<std::string>& selected);

    /// The tensors still to run, in file order.
    const std::vector<std::string>& remaining() const { return m_remaining; }
    /// Records a finished tensor (the `index`-th of remaining()) in the journal.
    void finished(int index, const TensorReport& report);
    /// Where this shard writes its weights: OUT's stem + "-0000I-of-0000N.safetensors".
    const std::string& exportPath() const { return m_exportPath; }

    /// Writes the partial report (with the export when `exported`), removes the journal, prints the
    /// shard's table worst first and returns the exit code (1 when a tensor of the shard failed).
    int finish(bool exported);

private:
    const QuantizeOptions& m_options;
    ShardSpec m_shard;
    ShardPart m_part;
    nlohmann::json m_header;
    std::unique_ptr<ReportJournal> m_journal;
    std::vector<std::string> m_remaining;
    std::vector<std::int64_t> m_remainingPositions;
    std::string m_exportPath;
    std::string m_indexPath;
};

/// The file names shard `shard` of an export to `out` (model.safetensors) uses, as Hugging Face
/// sharded checkpoints name them: model-00001-of-00004.safetensors and model.safetensors.index.json.
std::pair<std::string, std::string> shardExportNames(const std::string& out, const ShardSpec& shard);

} // namespace ql::cli
