#pragma once
// cpu: vectorised (kernels.h, picked per ISA at run time) and multithreaded over chunks, with
// calibration, quantization and the statistics fused into as few passes as the layout
// allows; a job asking for statistics reads its input once more, for the histograms.
// Bit-exact with cpu-reference: the same fp32 operations in the same order, no FMA contraction.
#include "backend/backend.h"
#include "cpu/kernels.h"

namespace ql {

class CpuBackend : public Backend {
public:
    /// threads = 0: std::thread::hardware_concurrency().
    explicit CpuBackend(unsigned threads = 0, std::int64_t chunkElements = 1 << 16);

    std::string name() const override { return "cpu"; }
    std::string deviceDescription() const override;
    std::optional<std::string> supports(const ResolvedSpec& plan) const override;
    /// Progress as chunks finish, always from the calling thread; cancel stops every worker within a chunk.
    Result run(const BackendTask& job, const ProgressFn& progress = {}) const override;

private:
    unsigned m_threads;
    std::int64_t m_chunk;
};

} // namespace ql
