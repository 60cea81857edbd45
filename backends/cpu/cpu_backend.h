#pragma once
// cpu: the reference arithmetic split into chunks over std::thread workers. Bit-exact with
// cpu-reference by construction (the same quantizeValue per element); vectorising comes later.
#include "backend/backend.h"

namespace ql {

class CpuBackend : public Backend {
public:
    /// threads = 0: std::thread::hardware_concurrency().
    explicit CpuBackend(unsigned threads = 0, std::int64_t chunkElements = 1 << 16);

    std::string name() const override { return "cpu"; }
    std::string deviceDescription() const override;
    std::optional<std::string> supports(const QuantPlan& plan) const override;
    /// Progress as chunks finish, always from the calling thread; cancel stops every worker within a chunk.
    Result run(const Job& job, const ProgressFn& progress = {}) const override;

private:
    Codes quantizeChunked(const QuantPlan& plan, const QuantParams& params, std::span<const float> x,
                          const ProgressFn& progress, double progressBase, double progressSpan) const;

    unsigned m_threads;
    std::int64_t m_chunk;
};

} // namespace ql
