#include "cpu/cpu_driver.h"

#include "base/error.h"
#include "cpu/parallel.h"
#include "quant/calibration.h"
#include "quant/calibration_search.h"
#include "quant/range_rule.h"
#include "quant/reference.h"
#include "quant/row_walker.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

namespace ql::cpu {
namespace {

// NVFP4's block codes, made once (on first use: no order to rely on between files' statics).
const QuantArgs& e4m3Args() {
    static const QuantArgs a = miniFloatArgs(MiniFloat::E4M3FN, Overflow::Saturate);
    return a;
}

// The input as the kernels read it: raw f32 / bf16 / f16 bytes in place, or f32 converted once.
struct Source {
    const std::byte* data = nullptr;
    DType dtype = DType::F32;
    std::size_t width = 4;
    std::vector<float> converted;

    const void* at(std::int64_t i) const { return data + static_cast<std::size_t>(i) * width; }
    float value(std::int64_t i) const {
        if (dtype == DType::F32) { // memcpy: a mapped file may place an f32 tensor at any offset
            float f;
            std::memcpy(&f, at(i), 4);
            return f;
        }
        std::uint16_t h;
        std::memcpy(&h, at(i), 2);
        return dtype == DType::BF16 ? bf16ToFloat(h) : halfToFloat(h);
    }
};

void openSource(const BackendTask& job, Source& s) {
    if (!job.values.empty() || !kernelReads(job.tensor.dtype())) {
        const std::span<const float> v = jobValues(job, s.converted);
        s.data = reinterpret_cast<const std::byte*>(v.data());
        s.dtype = DType::F32;
        s.width = 4;
        return;
    }
    if (job.tensor.elementCount() != elementCount(job.plan.shape))
        throw QuantError("job has " + std::to_string(job.tensor.elementCount()) +
                         " values but the plan's shape " + toString(job.plan.shape) + " needs " +
                         std::to_string(elementCount(job.plan.shape)));
    s.data = job.tensor.data();
    s.dtype = job.tensor.dtype();
    s.width = job.tensor.dtype() == DType::F32 ? 4 : 2;
}

// Chunks of the quantize loop a statistics slice may take together: the pass keeps a clipping
// row per slice for every group its slice shares with others (every group, for scales along a column),
// so hundreds of chunks are not hundreds of slices.
constexpr std::int64_t kMaxStatisticsSlices = 64;

class Engine {
public:
    Engine(const BackendTask& job, const DriverOptions& o, const StatisticsRequest* statistics)
        : m_plan(job.plan)
        , m_opt(o)
        , m_statistics(statistics)
        , m_walk(job.plan)
        , m_args(resolveArgs(job.plan))
        , m_rule(job.plan) {
        openSource(job, m_src);
        m_k = kernelsFor(m_plan, m_src.dtype);
        m_n = elementCount(m_plan.shape);
        const auto start = std::chrono::steady_clock::now();
        // The kernels write every code. A job that keeps only the statistics of its codes gets each
        // part's in a buffer of its worker's, reused from part to part: the tensor's codes are never
        // held at once (the kernel's clearing of a fresh 16 MB buffer cost about 6 ms of CPU in a
        // 4096×4096 int8 job, a tenth of its quantize pass).
        m_codesInParts = statistics && !statistics->keepCodes && SlicedAnalysis::measuresInParts(m_plan, m_n);
        m_codes = m_codesInParts ? Codes(m_plan.codeTarget, 0)
                                 : Codes(m_plan.codeTarget, m_n, Codes::Uninitialized{});
        m_partCodes.resize(std::max(o.threads, 1u));
        m_allocMs = msSince(start);
    }

    DriverOutput run(const std::optional<QuantParams>& given, const ProgressFn& progress, double base,
                     double span);

private:
    void prepareParams();
    void sizeZeroPoints();
    // Where the kernels write codes: the tensor's, or a worker's buffer holding one part's.
    struct CodeOut {
        Codes* codes;
        std::int64_t first; // the element whose code is (*codes)[0]
        std::uint8_t* at(std::int64_t i) const {
            return codes->data() +
                   static_cast<std::size_t>(i - first) * static_cast<std::size_t>(codes->width());
        }
        void set(std::int64_t i, std::int32_t v) const { codes->set(i - first, v); }
    };
    CodeOut codesFor(unsigned worker, std::int64_t from, std::int64_t to);
    void quantizeSegment(const Segment& s, const CodeOut& out);
    void quantizeRange(std::int64_t from, std::int64_t to, const CodeOut& out);
    template <typename Range, typename Quantize>
    void quantizeChunks(std::int64_t chunks, Range&& range, Quantize&& quantize, const ProgressFn& progress,
                        double base, double span);
    ValuesView values() const { return {m_src.data, m_src.dtype, m_n}; }
    void rangeSegment(const Segment& s, float* lo, float* hi, std::uint8_t* nan);
    struct RowScratch { // one row's group ranges, or its blocks' signed absolute maxima
        std::vector<float> lo, hi, amax;
        std::vector<std::uint8_t> nan;
    };
    void paramsOfRow(std::int64_t r, RowScratch& t);
    void fusedRows(std::int64_t r0, std::int64_t r1, const CodeOut& out);
    void paramsOfRows(std::int64_t r0, std::int64_t r1, RowScratch& scratch);
    std::int64_t rowChunks() const { return (m_walk.rows() + rowsPerChunk() - 1) / rowsPerChunk(); }
    std::int64_t rowsPerChunk() const {
        return std::max<std::int64_t>(1, m_opt.chunkElements / std::max<std::int64_t>(m_walk.inner(), 1));
    }
    template <typename Fn>
    void forRowChunks(Fn&& fn, const ProgressFn& progress, double base, double span) const;
    void blockMaxima(std::int64_t r0, std::int64_t r1, float& tensorAmax);
    void measureBlocks(std::int64_t r0, std::int64_t r1, float* out, std::int64_t offset) const;
    float tensorAbsMax(const ProgressFn& progress, double base, double span);
    template <typename Run, typename One>
    void forRuns(std::int64_t from, std::int64_t to, bool batching, Run&& run, One&& one) const;

    const ResolvedSpec& m_plan;
    DriverOptions m_opt;
    const StatisticsRequest* m_statistics; // none: codes only
    std::optional<SlicedAnalysis> m_pass;  // the statistics, measured in the quantize loop
    RowWalker m_walk;
    QuantArgs m_args;
    RangeRule m_rule;
    KernelSet m_k;
    Source m_src;
    std::int64_t m_n = 0;
    Codes m_codes;                  // the tensor's, or none where each part's go to m_partCodes
    bool m_codesInParts = false;    // (StatisticsRequest::keepCodes off)
    std::vector<Codes> m_partCodes; // per worker
    QuantParams m_params;
    // The zero points, whatever form the params hold them in: one per scale group, or, where the
    // params hold none (symmetric and floating plans), one row's worth of zeros shared by every row.
    std::vector<float> m_zp;
    bool m_zpPerGroup = true;
    const float* zpAt(std::int64_t g) const { return m_zp.data() + (m_zpPerGroup ? g : 0); }
    bool m_maximaKept = false; // m_params.scales holds each block's signed maximum until its row's turn
    double m_allocMs = 0;
};

// m_zp sized for m_params, as zeros: a zero point per group where the params hold any, else one
// row's worth (no kernel call spans more than a row) that zpAt hands to every group.
void Engine::sizeZeroPoints() {
    m_zpPerGroup = !m_params.zeroPoints.empty();
    m_zp.assign(static_cast<std::size_t>(m_zpPerGroup ? m_plan.scaleCount : m_walk.rowScaleCount()), 0.0f);
}

void Engine::prepareParams() {
    checkParams(m_plan, m_params);
    sizeZeroPoints();
    for (std::int64_t g = 0; m_zpPerGroup && g < m_plan.scaleCount; ++g)
        m_zp[static_cast<std::size_t>(g)] = m_params.zeroPointOf(g);
}

Engine::CodeOut Engine::codesFor(unsigned worker, std::int64_t from, std::int64_t to) {
    if (!m_codesInParts) return {&m_codes, 0};
    Codes& part = m_partCodes[worker];
    if (part.size() < to - from) part = Codes(m_plan.codeTarget, to - from, Codes::Uninitialized{});
    return {&part, from};
}

void Engine::quantizeSegment(const Segment& s, const CodeOut& codes) {
    std::uint8_t* out = codes.at(s.begin);
    const std::size_t g = static_cast<std::size_t>(s.scale);
    if (m_k.quantConst && !s.perElement) {
        m_k.quantConst(m_args, m_src.at(s.begin), s.length, m_params.scales[g], *zpAt(s.scale), out);
    } else if (m_k.quantPerElem && s.perElement) {
        m_k.quantPerElem(m_args, m_src.at(s.begin), s.length, m_params.scales.data() + g, zpAt(s.scale), out);
    } else {
        for (std::int64_t i = 0; i < s.length; ++i) {
            const std::size_t gi = s.perElement ? g + static_cast<std::size_t>(i) : g;
            const float zp = zpAt(s.scale)[s.perElement ? i : 0];
            codes.set(s.begin + i, quantizeValue(m_src.value(s.begin + i), m_params.scales[gi], zp, m_plan));
        }
    }
}

// Segments of [from, to), with the whole blocks along a row (MX and NVFP4) handed over together
// when `batching` (the walker's spans): run(first block, blocks) for two or more, one(segment) for
// every other segment and block.
template <typename Run, typename One>
void Engine::forRuns(std::int64_t from, std::int64_t to, bool batching, Run&& run, One&& one) const {
    m_walk.forSpans(from, to, [&](const Segment& s) {
        if (s.runLength == 0) return one(s);
        const std::int64_t blocks = s.length / s.runLength;
        if (batching && blocks > 1) return run(Segment{s.begin, s.runLength, s.scale, false}, blocks);
        for (std::int64_t j = 0; j < blocks; ++j)
            one(Segment{s.begin + j * s.runLength, s.runLength, s.scale + j, false});
    });
}

// Elements [from, to), each run of blocks in one kernel call.
void Engine::quantizeRange(std::int64_t from, std::int64_t to, const CodeOut& out) {
    forRuns(
        from, to, m_k.quantBlocks && out.codes->width() == 1,
        [&](const Segment& run, std::int64_t groups) {
            m_k.quantBlocks(m_args, m_src.at(run.begin), groups, run.length,
                            m_params.scales.data() + run.scale, zpAt(run.scale), out.at(run.begin));
        },
        [&](const Segment& s) { quantizeSegment(s, out); });
}

void Engine::rangeSegment(const Segment& s, float* lo, float* hi, std::uint8_t* nan) {
    const std::size_t g = static_cast<std::size_t>(s.scale);
    if (s.perElement) {
        m_k.rangePerElem(m_src.at(s.begin), s.length, lo + g, hi + g, nan + g);
        return;
    }
    bool seen = nan[g] != 0;
    m_k.rangeConst(m_src.at(s.begin), s.length, lo + g, hi + g, &seen);
    nan[g] = seen;
}

// One read from memory: each row's groups are measured, turned into params and quantized while
// the row is still in cache (rows own their groups, so threads never share a parameter). NVFP4's
// blocks were measured by the read before (blockMaxima): here they only become scales.
void Engine::fusedRows(std::int64_t r0, std::int64_t r1, const CodeOut& out) {
    RowScratch scratch;
    for (std::int64_t r = r0; r < r1; ++r) {
        paramsOfRows(r, r + 1, scratch);
        quantizeRange(r * m_walk.inner(), (r + 1) * m_walk.inner(), out);
    }
}

// Rows [r0, r1)'s params and zero points (fusedRows' first step, or a read of its own).
void Engine::paramsOfRows(std::int64_t r0, std::int64_t r1, RowScratch& scratch) {
    for (std::int64_t r = r0; r < r1; ++r) {
        const std::int64_t first = m_walk.rowFirstScale(r), count = m_walk.rowScaleCount();
        paramsOfRow(r, scratch);
        if (m_zpPerGroup)
            for (std::int64_t g = first; g < first + count; ++g)
                m_zp[static_cast<std::size_t>(g)] = m_params.zeroPointOf(g);
    }
}

// Row r's groups' parameters from their ranges: MX and NVFP4 blocks a run at a time through the
// absolute-maximum kernel (or from the maxima kept by the first read), other groups a segment at a
// time through the range kernel.
void Engine::paramsOfRow(std::int64_t r, RowScratch& t) {
    const std::int64_t first = m_walk.rowFirstScale(r), count = m_walk.rowScaleCount();
    const auto n = static_cast<std::size_t>(count);
    if (m_maximaKept) { // the first read measured the blocks: turned into scales in place
        float* const maxima = m_params.scales.data() + first;
        if (m_k.nvfp4Scales && m_params.tensorScale > 0.0f)
            m_k.nvfp4Scales(e4m3Args(), maxima, count, m_params.tensorScale,
                            m_params.scaleCodes.data() + first, maxima);
        else
            m_rule.applyBlocks(maxima, first, count, m_params);
        return;
    }
    if (m_rule.blocks()) {
        t.amax.resize(n);
        measureBlocks(r, r + 1, t.amax.data(), first);
        m_rule.applyBlocks(t.amax.data(), first, count, m_params);
        return;
    }
    t.nan.assign(n, 0);
    t.lo.assign(n, 0.0f);
    t.hi.assign(n, 0.0f);
    m_walk.forSegments(r * m_walk.inner(), (r + 1) * m_walk.inner(), [&](const Segment& s) {
        rangeSegment({s.begin, s.length, s.scale - first, s.perElement}, t.lo.data(), t.hi.data(),
                     t.nan.data());
    });
    for (std::size_t g = 0; g < n; ++g)
        m_rule.apply(t.lo[g], t.hi[g], first + static_cast<std::int64_t>(g), m_params, t.nan[g] != 0);
}

// fn(first row, end row, chunk, worker) over rowChunks() chunks of whole rows (about the configured
// chunk size each), on every worker.
template <typename Fn>
void Engine::forRowChunks(Fn&& fn, const ProgressFn& progress, double base, double span) const {
    const std::int64_t rows = rowsPerChunk();
    parallelChunks(
        m_opt.threads, rowChunks(),
        [&](std::int64_t c, unsigned w) { fn(c * rows, std::min(m_walk.rows(), (c + 1) * rows), c, w); },
        progress, base, span);
}

// NVFP4's first read, where rows own their blocks: each block's signed maximum (absMaxBlocks) kept in
// the scale slots, so the second read only quantizes, and the tensor's finite absolute maximum as
// the largest of them.
void Engine::blockMaxima(std::int64_t r0, std::int64_t r1, float& tensorAmax) {
    const float* const amax = m_params.scales.data();
    measureBlocks(r0, r1, m_params.scales.data(), 0);
    for (std::int64_t r = r0; r < r1; ++r)
        for (std::int64_t g = m_walk.rowFirstScale(r), e = g + m_walk.rowScaleCount(); g < e; ++g)
            tensorAmax = std::max(tensorAmax, std::fabs(amax[g]));
}

// Each block's signed maximum (absMaxBlocks) in rows [r0, r1), block g's into out[g - offset], a run of
// blocks per kernel call.
void Engine::measureBlocks(std::int64_t r0, std::int64_t r1, float* out, std::int64_t offset) const {
    auto blocks = [&](const Segment& s, std::int64_t groups) {
        m_k.absMaxBlocks(m_src.at(s.begin), groups, s.length, out + (s.scale - offset));
    };
    forRuns(r0 * m_walk.inner(), r1 * m_walk.inner(), true, blocks, [&](const Segment& s) { blocks(s, 1); });
}

// The finite absolute maximum of the whole tensor (NVFP4's tensor scale), on every worker.
float Engine::tensorAbsMax(const ProgressFn& progress, double base, double span) {
    const std::int64_t chunk = std::max<std::int64_t>(m_opt.chunkElements, 1);
    const std::int64_t chunks = std::max<std::int64_t>(1, (m_n + chunk - 1) / chunk);
    std::vector<float> lo(m_opt.threads, 0.0f), hi(m_opt.threads, 0.0f);
    parallelChunks(
        m_opt.threads, chunks,
        [&](std::int64_t c, unsigned w) {
            bool nan = false; // (not needed: NaN never widens a range)
            m_k.rangeConst(m_src.at(c * chunk), std::min(m_n, (c + 1) * chunk) - c * chunk, &lo[w], &hi[w],
                           &nan);
        },
        progress, base, span);
    float amax = 0.0f;
    for (unsigned w = 0; w < m_opt.threads; ++w)
        amax = std::max({amax, std::fabs(lo[w]), std::fabs(hi[w])});
    return amax;
}

// quantize(c, out) for every chunk c in [0, chunks) on every worker, chunk c being elements range(c) =
// {from, to}, its codes written to `out` (codesFor). With statistics, each chunk is measured right after it,
// while its input and codes are in cache: consecutive chunks make a slice (at most kMaxStatisticsSlices of
// them), taken in order by one worker, so the sums depend on the chunk size alone, never on the threads.
template <typename Range, typename Quantize>
void Engine::quantizeChunks(std::int64_t chunks, Range&& range, Quantize&& quantize,
                            const ProgressFn& progress, double base, double span) {
    const std::int64_t perSlice =
        m_statistics ? std::max<std::int64_t>(1, (chunks + kMaxStatisticsSlices - 1) / kMaxStatisticsSlices)
                     : 1;
    const std::int64_t slices = (chunks + perSlice - 1) / perSlice;
    if (m_statistics) {
        std::vector<std::int64_t> starts(static_cast<std::size_t>(slices));
        for (std::int64_t i = 0; i < slices; ++i)
            starts[static_cast<std::size_t>(i)] = range(i * perSlice).first;
        m_pass.emplace(m_plan, m_params, m_codes, values(), m_statistics->options, starts,
                       std::max(m_opt.threads, 1u));
        if (m_statistics->importance) m_pass->weigh(*m_statistics->importance);
    }
    parallelChunks(
        m_opt.threads, slices,
        [&](std::int64_t i, unsigned worker) {
            for (std::int64_t c = i * perSlice, end = std::min(chunks, (i + 1) * perSlice); c < end; ++c) {
                const auto [from, to] = range(c);
                const CodeOut out = codesFor(worker, from, to);
                quantize(c, out);
                if (m_pass) m_pass->addPart(i, from, to, worker, m_codesInParts ? out.codes : nullptr);
            }
        },
        progress, base, span);
}

DriverOutput Engine::run(const std::optional<QuantParams>& given, const ProgressFn& progress, double base,
                         double span) {
    DriverOutput out;
    const auto start = std::chrono::steady_clock::now();
    const std::int64_t chunk = std::max<std::int64_t>(m_opt.chunkElements, 1);
    const bool calibrating = !given;
    const bool fast =
        calibrating && (rangeCalibrated(m_plan) || blockRangeCalibrated(m_plan)) && m_k.rangeConst;
    const bool fused = fast && m_walk.rowsOwnGroups() && m_walk.inner() <= (1 << 16);
    if (fast) {
        m_params = m_rule.emptyParams();
        if (m_rule.needsTensorAmax()) { // NVFP4: a read for the tensor scale before the block scales
            float amax = 0.0f;
            if (fused) {
                std::vector<float> top(m_opt.threads, 0.0f);
                forRowChunks([&](std::int64_t r0, std::int64_t r1, std::int64_t,
                                 unsigned w) { blockMaxima(r0, r1, top[w]); },
                             progress, base, span / 2);
                amax = *std::max_element(top.begin(), top.end());
                m_maximaKept = true;
            } else {
                amax = tensorAbsMax(progress, base, span / 2);
            }
            m_rule.setTensorAmax(amax, m_params);
            base += span / 2;
            span /= 2;
            out.passes = 1;
            out.prepareMs = msSince(start);
        }
    }

    if (fused) {
        sizeZeroPoints(); // (each row's zero points are filled as its turn comes)
        const std::int64_t rows = rowsPerChunk(), inner = m_walk.inner();
        auto rowsOf = [&](std::int64_t c) {
            return std::pair{c * rows, std::min(m_walk.rows(), (c + 1) * rows)};
        };
        if (m_statistics) { // the statistics' edges follow from every group's params: a read for them first
            forRowChunks(
                [&](std::int64_t r0, std::int64_t r1, std::int64_t, unsigned) {
                    RowScratch scratch;
                    paramsOfRows(r0, r1, scratch);
                },
                progress, base, span / 2);
            base += span / 2;
            span /= 2;
            out.passes += 1;
            out.prepareMs = msSince(start);
        }
        quantizeChunks(
            rowChunks(),
            [&](std::int64_t c) {
                const auto [r0, r1] = rowsOf(c);
                return std::pair{r0 * inner, r1 * inner};
            },
            [&](std::int64_t c, const CodeOut& out) {
                const auto [r0, r1] = rowsOf(c);
                if (m_statistics)
                    quantizeRange(r0 * inner, r1 * inner, out);
                else
                    fusedRows(r0, r1, out);
            },
            progress, base, span);
        checkParams(m_plan, m_params);
        out.passes += 1;
    } else {
        double quantBase = base, quantSpan = span;
        if (given) {
            m_params = *given;
        } else if (fast) {
            // Pass 1: ranges per worker, merged; then the reference's range -> scale step.
            const std::size_t groups = static_cast<std::size_t>(m_plan.scaleCount);
            std::vector<std::vector<float>> lo(m_opt.threads, std::vector<float>(groups, 0.0f)), hi = lo;
            std::vector<std::vector<std::uint8_t>> nan(m_opt.threads, std::vector<std::uint8_t>(groups, 0));
            const std::int64_t chunks = std::max<std::int64_t>(1, (m_n + chunk - 1) / chunk);
            parallelChunks(
                m_opt.threads, chunks,
                [&](std::int64_t c, unsigned w) {
                    m_walk.forSegments(c * chunk, std::min(m_n, (c + 1) * chunk), [&](const Segment& s) {
                        rangeSegment(s, lo[w].data(), hi[w].data(), nan[w].data());
                    });
                },
                progress, base, span / 2);
            for (std::size_t g = 0; g < groups; ++g) {
                float l = 0.0f, h = 0.0f;
                bool n = false;
                for (unsigned w = 0; w < m_opt.threads; ++w) {
                    l = std::min(l, lo[w][g]);
                    h = std::max(h, hi[w][g]);
                    n = n || nan[w][g] != 0;
                }
                m_rule.apply(l, h, static_cast<std::int64_t>(g), m_params, n);
            }
            quantBase = base + span / 2;
            quantSpan = span / 2;
            out.passes += 1;
        } else {
            // Calibrations without a range kernel (percentile, MSE, entropy, MX / NVFP4 codes searched
            // by MSE): the fast calibrators read the input in place, in its own dtype, on the driver's
            // threads.
            m_params = calibrateFast(m_plan, m_src.data, m_src.dtype, m_opt.threads);
            out.passes = 1;
        }
        out.prepareMs = msSince(start);
        prepareParams();
        const std::int64_t chunks = std::max<std::int64_t>(1, (m_n + chunk - 1) / chunk);
        auto range = [&](std::int64_t c) { return std::pair{c * chunk, std::min(m_n, (c + 1) * chunk)}; };
        quantizeChunks(
            chunks, range,
            [&](std::int64_t c, const CodeOut& out) {
                const auto [from, to] = range(c);
                quantizeRange(from, to, out);
            },
            progress, quantBase, quantSpan);
        out.passes += 1;
    }
    out.kernelMs = msSince(start) - out.prepareMs;
    out.prepareMs += m_allocMs; // the code buffer is prepared before the data moves
    if (m_pass) {               // the slices' statistics merged: no further read, not timed with the kernels
        const auto merging = std::chrono::steady_clock::now();
        out.analysis = m_pass->finish();
        out.weighted = m_pass->weighted();
        out.statisticsMs = msSince(merging);
    }
    out.params = std::move(m_params);
    out.codes = std::move(m_codes);
    return out;
}

} // namespace

DriverOutput runJob(const BackendTask& job, const DriverOptions& options, const StatisticsRequest* statistics,
                    const ProgressFn& progress, double base, double span) {
    if (job.plan.shape.empty() || elementCount(job.plan.shape) == 0) {
        // Scalars and empty tensors: nothing to vectorise; the reference is the answer.
        std::vector<float> storage;
        const auto x = jobValues(job, storage);
        DriverOutput out;
        out.params = job.params ? *job.params : calibrate(job.plan, x);
        out.codes = quantizeReference(job.plan, out.params, x);
        reportProgress(progress, base + span);
        if (statistics) {
            TensorAccumulators a =
                accumulate(job.plan, out.params, out.codes, ValuesView::of(x), *statistics);
            out.analysis = std::move(a.analysis);
            out.weighted = std::move(a.weighted);
        }
        return out;
    }
    Engine engine(job, options, statistics);
    return engine.run(job.params, progress, base, span);
}

} // namespace ql::cpu
