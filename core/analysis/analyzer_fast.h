// The fast analysis pass (analyzer.h), included once per ISA by analyzer_fast_<isa>.cpp (the
// baseline, and under "#pragma GCC target" AVX2 and AVX-512), each in its own namespace
// (QL_ANALYZER_NS), picked at run time. The GCC vector types fix the lanes and the order of every
// sum, so every build gives the same bits; only the instructions differ. No include guard: included
// once per ISA, after analyzer_fast_deps.h.
#if !defined(QL_ANALYZER_NS) || !defined(QL_ANALYZER_LANES)
#error "define QL_ANALYZER_NS and QL_ANALYZER_LANES before including analyzer_fast.h"
#endif

#include "analysis/block_sums.h"

namespace ql::detail::QL_ANALYZER_NS {
// Floats in the ISA's widest register: the histogram filler's lanes (counts do not depend on them).
constexpr int kFloatLanes = QL_ANALYZER_LANES;
// The per-element bodies below must inline into the segment loops (GCC's attribute on a lambda).
#define QL_INLINE __attribute__((always_inline))

// Elements handled together: a block of x and x̂ staged for the sums and the histograms.
constexpr int kBlock = 256;
static_assert(kBlock <= HistogramFiller::kBlock);

// Code readers per width and signedness: codeAt(i) is the code of element i, from codes that start
// at element `first` (the tensor's, or a part's own). Named types, so the FP4 decoder can load a
// register of byte codes at once (Reconstruct::decodeFp4).
struct WideCodes {
    const std::uint8_t* p;
    std::int64_t first;
    std::int32_t operator()(std::int64_t i) const {
        std::int32_t v;
        std::memcpy(&v, p + 4 * (i - first), 4);
        return v;
    }
    const std::uint8_t* bytes(std::int64_t) const { return nullptr; } // (four bytes a code)
};
struct SignedByteCodes {
    const std::uint8_t* p;
    std::int64_t first;
    std::int32_t operator()(std::int64_t i) const { return static_cast<std::int8_t>(p[i - first]); }
    const std::uint8_t* bytes(std::int64_t i) const { return p + (i - first); }
};
struct ByteCodes {
    const std::uint8_t* p;
    std::int64_t first;
    std::int32_t operator()(std::int64_t i) const { return p[i - first]; }
    const std::uint8_t* bytes(std::int64_t i) const { return p + (i - first); }
};

// fn(codeAt) with the reader of the codes' width and signedness, decided once: `codes` holds the
// codes of elements first, first + 1, ...
template <typename Fn> decltype(auto) withCodes(const Codes& codes, std::int64_t first, Fn&& fn) {
    const std::uint8_t* p = codes.data();
    switch (codes.target()) {
    case Target::Int32:
        return fn(WideCodes{p, first});
    case Target::Int8:
    case Target::Int4:
        return fn(SignedByteCodes{p, first});
    default:
        return fn(ByteCodes{p, first});
    }
}

// dequantizeValue with the plan's choices made once: float targets decode through a table of the
// format's codes, the scale operation (applyInverseScale) is chosen per call by a predictable branch.
class Reconstruct {
public:
    explicit Reconstruct(const ResolvedSpec& plan)
        : m_op(plan.convention.scaleOp)
        , m_float(isFloatTarget(plan.codeTarget))
        , m_fp4(plan.codeTarget == Target::Fp4E2M1) {
        if (m_float)
            for (int c = 0; c < 256; ++c)
                m_decoded[static_cast<std::size_t>(c)] = codeValue(c, 0.0f, plan);
    }
    QL_INLINE float operator()(std::int32_t code, float scale, float zp) const {
        const float value =
            m_float ? m_decoded[static_cast<std::size_t>(code & 0xFF)] : static_cast<float>(code) - zp;
        return applyInverseScale(value, scale, m_op);
    }

    /// x̂ of `count` runs of `length` codes side by side from flat index `first`, run j in group
    /// `group + j` (one run: a group's stretch; more: MX and NVFP4 blocks): the decoding and the scale
    /// operation chosen once for them all, so each run's loop vectorises.
    template <typename CodeAt>
    QL_INLINE void runs(CodeAt codeAt, std::int64_t first, int count, int length, const QuantParams& params,
                        std::int64_t group, float* out) const {
        const float* const scales = params.scales.data() + group;
        if constexpr (kFloatLanes >= 8) {
            if (m_fp4) // (a 4-lane build has no variable permute: it looks the values up)
                return withOp([&](auto op) QL_INLINE {
                    for (int j = 0; j < count; ++j)
                        decodeFp4(codeAt, first + j * length, length, scales[j], op, out + j * length);
                });
        }
        auto decoded = [&](auto valueOf) QL_INLINE { // valueOf(code, zero point)
            withOp([&](auto op) QL_INLINE {
                for (int j = 0; j < count; ++j) {
                    const std::int64_t at = first + j * length;
                    const float scale = scales[j], zp = params.zeroPointOf(group + j);
                    float* const o = out + j * length;
                    for (int k = 0; k < length; ++k)
                        o[k] = applyInverseScale(valueOf(codeAt(at + k), zp), scale, op);
                }
            });
        };
        if (m_float)
            decoded([&](std::int32_t code, float)
                        QL_INLINE { return m_decoded[static_cast<std::size_t>(code & 0xFF)]; });
        else
            decoded([](std::int32_t code, float zp) QL_INLINE { return static_cast<float>(code) - zp; });
    }

private:
    // E2M1 codes decoded and scaled a register at a time: the 16 values sit in two registers and each
    // lane picks its own (decodeMiniFloat reads a code's low four bits only, so the table's first 16
    // are all). Scaled in the register, not through a buffer: reading 16 lanes back from two 8-lane
    // stores cannot be forwarded, and that stall was an eighth of an NVFP4 pass.
    template <typename CodeAt, typename Op>
    QL_INLINE void decodeFp4(CodeAt codeAt, std::int64_t first, int n, float scale, Op op, float* out) const {
        using F = typename FloatLanes<kFloatLanes>::F;
        using I = typename FloatLanes<kFloatLanes>::I;
        F low, high;
        std::memcpy(&low, m_decoded.data(), sizeof low);
        std::memcpy(&high, m_decoded.data() + kFloatLanes, sizeof high);
        const F s = F{} + scale;
        int k = 0;
        for (; k + kFloatLanes <= n; k += kFloatLanes) {
            const I code = codesAt(codeAt, first + k);
            const F v = __builtin_shuffle(low, high, code & 15);
            // applyInverseScale, lane by lane (the same IEEE operations).
            F r;
            if constexpr (Op::value == ScaleOp::Divide)
                r = v * s;
            else if constexpr (Op::value == ScaleOp::Multiply)
                r = v / s;
            else
                r = v / s / s;
            std::memcpy(out + k, &r, sizeof r);
        }
        for (; k < n; ++k)
            out[k] =
                applyInverseScale(m_decoded[static_cast<std::size_t>(codeAt(first + k) & 15)], scale, op);
    }

    // A register of codes from flat index i: eight byte codes widened in one instruction in the AVX2 and
    // AVX-512 builds (both eight float lanes), others code by code.
    template <typename CodeAt> QL_INLINE static auto codesAt(CodeAt codeAt, std::int64_t i) {
        using I = typename FloatLanes<kFloatLanes>::I;
        if constexpr (std::is_same_v<CodeAt, ByteCodes>) {
#ifdef QL_ANALYZER_AVX2
            if constexpr (kFloatLanes == 8) {
                std::int64_t bytes;
                std::memcpy(&bytes, codeAt.bytes(i), sizeof bytes);
                return reinterpret_cast<I>(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(bytes)));
            }
#endif
        }
        I code;
        for (int l = 0; l < kFloatLanes; ++l)
            code[l] = codeAt(i + l);
        return code;
    }

    // fn(op) with the scale operation as a constant (MultiplyReciprocal applies as Divide does).
    template <typename Fn> QL_INLINE void withOp(Fn&& fn) const {
        switch (m_op) {
        case ScaleOp::Divide:
        case ScaleOp::MultiplyReciprocal:
            return fn(std::integral_constant<ScaleOp, ScaleOp::Divide>{});
        case ScaleOp::Multiply:
            return fn(std::integral_constant<ScaleOp, ScaleOp::Multiply>{});
        case ScaleOp::MultiplyTwice:
            return fn(std::integral_constant<ScaleOp, ScaleOp::MultiplyTwice>{});
        }
    }

    ScaleOp m_op;
    bool m_float;
    bool m_fp4;
    std::array<float, 256> m_decoded{};
};

// A view's elements, staged a block at a time through one function per dtype chosen once: the pass's
// body is then built once per code width, not once per dtype and code width (a third of the instances
// to compile; a call per block costs nothing measurable).
class BlockLoader {
public:
    explicit BlockLoader(const ValuesView& v)
        : m_data(v.data)
        , m_stage(v.dtype == DType::BF16  ? &stageAs<DType::BF16>
                  : v.dtype == DType::F16 ? &stageAs<DType::F16>
                                          : &stageAs<DType::F32>) {}
    /// Elements begin .. begin + n - 1 into out as f32.
    void operator()(std::int64_t begin, int n, float* out) const { m_stage(m_data, begin, n, out); }
    /// Element i as f32.
    float operator()(std::int64_t i) const {
        float f;
        m_stage(m_data, i, 1, &f);
        return f;
    }

private:
    using Stage = void (*)(const std::byte*, std::int64_t, int, float*);
    // (No lambda here: a closure's call operator built for the ISA would be a weak symbol outside its
    // namespace, isa_builds_share_only_baseline_code.)
    template <DType T> static void stageAs(const std::byte* data, std::int64_t begin, int n, float* out) {
        if constexpr (T == DType::F32) {
            std::memcpy(out, data + 4 * begin, 4 * static_cast<std::size_t>(n));
        } else {
            const std::byte* const p = data + 2 * begin;
            for (int k = 0; k < n; ++k) {
                std::uint16_t h;
                std::memcpy(&h, p + 2 * k, 2);
                out[k] = T == DType::BF16 ? bf16ToFloat(h) : halfToFloat(h);
            }
        }
    }
    const std::byte* m_data;
    Stage m_stage;
};

// x and x̂ of one group's segment, a block of kBlock at a time: fn(first, len, xs, xh).
template <typename CodeAt, typename Fn>
inline QL_INLINE void forBlocksOf(const Segment& seg, const BlockLoader& load, CodeAt codeAt,
                                  const Reconstruct& xhatOf, const QuantParams& params, Fn&& fn) {
    alignas(64) float xs[kBlock], xh[kBlock];
    const std::int64_t end = seg.begin + seg.length;
    for (std::int64_t b = seg.begin; b < end; b += kBlock) {
        const int len = static_cast<int>(std::min<std::int64_t>(kBlock, end - b));
        load(b, len, xs);
        xhatOf.runs(codeAt, b, 1, len, params, seg.scale, xh);
        fn(b, len, xs, xh);
    }
}

// The whole groups of a segment of short ones (runLength set, or one group shorter than kBlock), as
// many at a time as the staged block has room for: take(first flat index, its group, groups, length),
// which stages them (`staged` is the staged count take adds to), or makeRoom() when none fits.
template <typename MakeRoom, typename Take>
inline QL_INLINE void forStagedGroups(const Segment& seg, const int& staged, MakeRoom&& makeRoom,
                                      Take&& take) {
    const int len = static_cast<int>(seg.runLength != 0 ? seg.runLength : seg.length);
    std::int64_t b = seg.begin, g = seg.scale;
    for (std::int64_t left = seg.length / len; left > 0;) {
        const int count = static_cast<int>(std::min<std::int64_t>((kBlock - staged) / len, left));
        if (count == 0) {
            makeRoom();
            continue;
        }
        take(b, g, count, len);
        b += std::int64_t{count} * len;
        g += count;
        left -= count;
    }
}

// Fixed slices, a function of the tensor's size alone (never of the thread count), so merging them
// in order gives the same sums on every machine. Slices share the group tables (SliceGroups), so
// many groups (an NVFP4 block every 16 elements) no longer need fewer, larger slices.
std::int64_t sliceCount(std::int64_t n) {
    constexpr std::int64_t kMinSlice = 1 << 16, kMaxSlices = 16;
    return std::clamp<std::int64_t>(n / kMinSlice, 1, kMaxSlices);
}

// How many workers forEachSlice runs: `threads` (0: every hardware thread), at most one a slice.
unsigned sliceWorkers(std::int64_t slices, unsigned threads) {
    return static_cast<unsigned>(std::clamp<std::int64_t>(
        slices, 1, threads ? threads : std::max(1u, std::thread::hardware_concurrency())));
}

// Runs fn(slice, worker) for every slice on up to `threads` threads (worker < sliceWorkers()). The calling
// thread reports first + span × (slices done / slices) through `progress` after each slice it ran, then, once
// it finds no slice left to take, each time another worker finishes one, until all have stopped; so the steps
// are the slices whatever the thread count. If `progress` or any slice throws, no further slice
// starts, the others finish theirs, and the exception propagates.
template <typename Fn>
void forEachSlice(std::int64_t slices, unsigned threads, Fn&& fn,
                  const std::function<void(double)>& progress = {}, double first = 0, double span = 1) {
    const unsigned workers = sliceWorkers(slices, threads);
    std::atomic<std::int64_t> next{0};
    std::mutex m;
    std::condition_variable changed;
    std::int64_t done = 0, running = workers; // guarded by m
    auto report = [&](std::int64_t finished) {
        progress(first + span * static_cast<double>(finished) / static_cast<double>(slices));
    };
    runOnWorkers(workers, [&](unsigned w) {
        auto stopped = [&] {
            const std::lock_guard lock(m);
            --running;
            changed.notify_all();
        };
        try {
            for (std::int64_t s; (s = next.fetch_add(1)) < slices;) {
                fn(s, w);
                std::int64_t finished;
                {
                    const std::lock_guard lock(m);
                    finished = ++done;
                }
                changed.notify_all();
                if (w == 0 && progress) report(finished);
            }
            if (w == 0 && progress) {
                std::unique_lock lock(m);
                for (std::int64_t shown = done; running > 1;) {
                    changed.wait(lock, [&] { return done != shown || running <= 1; });
                    if (done == shown) continue;
                    shown = done;
                    lock.unlock();
                    report(shown);
                    lock.lock();
                }
            }
        } catch (...) {
            next.store(slices); // no further slice starts; the others finish theirs
            stopped();
            throw;
        }
        stopped();
    });
    if (progress) progress(first + span); // the last slice may have been a worker's
}

// Whether every x[k] and x̂[k] is finite, without a compare or a branch per element: adding one to
// the exponent field carries into the sign bit only when the exponent is all ones (Inf or NaN).
QL_INLINE inline bool allFinite(const float* x, const float* xh, int n) {
    std::uint32_t carried = 0;
    for (int k = 0; k < n; ++k) {
        std::uint32_t a, b;
        std::memcpy(&a, x + k, 4);
        std::memcpy(&b, xh + k, 4);
        carried |= ((a & 0x7F800000u) + 0x00800000u) | ((b & 0x7F800000u) + 0x00800000u);
    }
    return (carried & 0x80000000u) == 0;
}

// x − x̂ where float gives it exactly, NaN where it does not: e = fl(x − x̂) is exact exactly when
// x − e gives x̂ back and e + x̂ gives x (Fast2Sum: with the larger of the two first, the sum's
// rounding error is then zero; an exact e passes both). (Masks as bit operations: GCC scalarises ?:
// on these vectors.)
template <typename F, typename I> QL_INLINE inline F exactDifference(F x, F h) {
    const F e = x - h;
    const I exact = ((x - e) == h) & ((e + h) == x);
    return reinterpret_cast<F>((reinterpret_cast<I>(e) & exact) | ((I{} + 0x7FC00000) & ~exact));
}

// exactDifference of a block into e; the values short of a register are NaN (the filler takes those
// through the exact double in any case).
template <int Lanes>
QL_INLINE inline void exactDifferences(const float* xs, const float* xh, int n, float* e) {
    using F = typename FloatLanes<Lanes>::F;
    using I = typename FloatLanes<Lanes>::I;
    int k = 0;
    for (; k + Lanes <= n; k += Lanes) {
        F x, h;
        std::memcpy(&x, xs + k, sizeof x);
        std::memcpy(&h, xh + k, sizeof h);
        const F d = exactDifference<F, I>(x, h);
        std::memcpy(e + k, &d, sizeof d);
    }
    for (; k < n; ++k)
        e[k] = std::numeric_limits<float>::quiet_NaN();
}

// One slice's sums, made by its first part on its worker: merged in slice order, never by thread.
struct alignas(64) SliceTotals {
    SliceTotals(SliceGroups slice, const std::optional<ImportanceWeights>& weights, std::int64_t count)
        : clipping(std::move(slice)) {
        if (weights) weighted.emplace(*weights, count);
    }

    SliceSums sums;       // the all-finite blocks' sums, joined to stats and ranges at the end
    GroupClipping groups; // every group's sums, rows or not: the slice's part of the total
    ErrorStats stats;
    SliceGroups clipping; // this slice's groups: the result's own, or a table of those it shares
    WidestGroup widest;
    std::optional<WeightedRuns> weighted; // with importance weights (SlicedAnalysis::weigh)
};

// The pass over one cut of the tensor into slices (SlicedAnalysis): each slice's sums and each
// worker's counts as the caller adds its parts, then, in finish(), the slices merged in order.
class Pass final : public SlicedPass {
public:
    Pass(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes, const ValuesView& x,
         const AnalysisOptions& opt, const std::vector<std::int64_t>& sliceStarts, unsigned workers,
         bool codesInParts)
        : m_plan(plan)
        , m_params(params)
        , m_codes(codes)
        , m_x(x)
        , m_opt(opt)
        , m_a(detail::beginAnalysis(plan, params, codes, x.count, opt.groupRows, codesInParts))
        , m_rows(static_cast<std::int64_t>(m_a.clipping.groups().size()))
        , m_walker(plan)
        , m_xhatOf(plan)
        , m_edgeRule(plan)
        , m_floatTarget(m_a.clipping.floatTarget())
        , m_wide(codes.target() == Target::Int32)
        , m_pairs(kFloatLanes >= 8 && !m_wide && x.count >= kPairsFrom && opt.valueBins <= kPairsMaxBins) {
        detail::openHistograms(m_a, plan, params, opt);
        if (ErrorCells::fits(m_a.error, m_a.absErrorLog)) m_cellLayout.emplace(m_a.error, m_a.absErrorLog);
        const std::size_t slices = sliceStarts.size();
        m_ranges.resize(slices);
        for (std::size_t s = 0; s < slices; ++s)
            m_ranges[s] = m_walker.scaleRange(sliceStarts[s], s + 1 < slices ? sliceStarts[s + 1] : x.count);
        m_bounds.emplace(m_ranges);
        m_slices.resize(slices);
        m_workers.resize(std::max(workers, 1u));
    }

    void weigh(const ImportanceWeights& w) override {
        checkImportanceFits(w, m_x.count);
        m_weights = w;
    }
    void addPart(std::int64_t s, std::int64_t from, std::int64_t to, unsigned worker,
                 const Codes* partCodes) override;
    TensorAnalysis finish(std::optional<WeightedError>& weighted) override;

private:
    // Every segment of [from, to): seg(segment, load, codeAt) with the dtype and code width decided,
    // the codes read from `codes` (starting at element `first`). A segment is one group's run, per-element
    // scales, or short blocks side by side (runLength below kBlock); longer blocks come one at a time.
    template <typename Seg>
    QL_INLINE void forSegmentsOf(std::int64_t from, std::int64_t to, const Codes& codes, std::int64_t first,
                                 Seg&& seg) const {
        const BlockLoader load(m_x);
        withCodes(codes, first, [&](auto codeAt) {
            m_walker.forSpans(from, to, [&](const Segment& g) {
                if (g.runLength < kBlock) return seg(g, load, codeAt);
                for (std::int64_t j = 0; j < g.length / g.runLength; ++j)
                    seg(Segment{g.begin + j * g.runLength, g.runLength, g.scale + j, false}, load, codeAt);
            });
        });
    }

    const ResolvedSpec& m_plan;
    const QuantParams& m_params;
    const Codes& m_codes;
    ValuesView m_x;
    AnalysisOptions m_opt;
    TensorAnalysis m_a;
    std::int64_t m_rows; // clipping rows kept
    RowWalker m_walker;
    Reconstruct m_xhatOf;
    ClipEdgeRule m_edgeRule; // each group's edges as the pass reaches it, not a table of them
    bool m_floatTarget;
    bool m_wide; // int32 codes
    // Byte codes counted with the values in pairs (ValueCodePairs), on tensors whose workers count
    // enough to pay for the pair table (a quarter of a megabyte each, cleared and added up once), in
    // the builds whose counting is bound by its stores (the baseline's is not: there the table only
    // adds cache misses, 8 % of the int8 job).
    // (At most a megabyte of pairs: more value bins than that count apart.)
    static constexpr std::int64_t kPairsFrom = std::int64_t{1} << 20;
    static constexpr int kPairsMaxBins = 1000;
    bool m_pairs;
    std::optional<ErrorCells::Layout> m_cellLayout;     // where the error cells' counts go (ErrorCells::fits)
    std::optional<ImportanceWeights> m_weights;         // weigh()'s
    std::vector<GroupRange> m_ranges;                   // each slice's groups
    std::optional<SliceGroups::Bounds> m_bounds;        // and where they meet the other slices'
    std::vector<std::unique_ptr<SliceTotals>> m_slices; // each made by its slice's first part
    std::vector<std::unique_ptr<WorkerCounts>> m_workers; // each made by its worker's first part

    // Slice s's sums, made on the first call, by the worker that runs the slice.
    SliceTotals& slice(std::int64_t s) {
        std::unique_ptr<SliceTotals>& p = m_slices[static_cast<std::size_t>(s)];
        if (!p)
            p = std::make_unique<SliceTotals>(SliceGroups(m_ranges, *m_bounds, static_cast<std::size_t>(s),
                                                          m_a.clipping.groupData(), m_rows),
                                              m_weights, m_x.count);
        return *p;
    }
    // Worker w's counts, made on its first call.
    WorkerCounts& counts(unsigned w) {
        if (w >= m_workers.size())
            throw QuantError("analysis: a part from more workers than the pass was made for");
        std::unique_ptr<WorkerCounts>& c = m_workers[w];
        if (!c) c = std::make_unique<WorkerCounts>(m_a, m_cellLayout ? &*m_cellLayout : nullptr);
        return *c;
    }
};

void Pass::addPart(std::int64_t s, std::int64_t from, std::int64_t to, unsigned worker,
                   const Codes* partCodes) {
    if (partCodes ? partCodes->size() < to - from || partCodes->target() != m_codes.target()
                  : m_codes.size() < to)
        throw QuantError("analysis: no codes for elements " + std::to_string(from) + " to " +
                         std::to_string(to));
    const Codes& codes = partCodes ? *partCodes : m_codes;
    const std::int64_t codesFrom = partCodes ? from : 0;
    SliceTotals& p = slice(s);
    WorkerCounts& tally = counts(worker);
    const QuantParams& params = m_params;
    const std::vector<float>& scales = params.scales;
    const Reconstruct& xhatOf = m_xhatOf;
    const ClipEdgeRule& edgeRule = m_edgeRule;
    const bool wide = m_wide, floatTarget = m_floatTarget;
    const std::int64_t rows = m_rows;
    auto countCode = [&](std::int32_t c) QL_INLINE {
        if (wide)
            tally.wideCodes.add(c);
        else
            ++tally.byteCodes[0][static_cast<std::size_t>(c & 0xFF)];
    };
    // 8-bit codes into four tables taken in turn, so neighbouring equal codes do not chain.
    auto countCodes = [&](auto codeAt, std::int64_t b, int len) QL_INLINE {
        if (wide) {
            for (int k = 0; k < len; ++k)
                tally.wideCodes.add(codeAt(b + k));
            return;
        }
        int k = 0;
        for (; k + 4 <= len; k += 4)
            for (int t = 0; t < 4; ++t)
                ++tally.byteCodes[t][static_cast<std::size_t>(codeAt(b + k + t) & 0xFF)];
        for (; k < len; ++k)
            ++tally.byteCodes[0][static_cast<std::size_t>(codeAt(b + k) & 0xFF)];
    };
    // The histograms: a staged block whose x and x̂ are all finite at once, or one finite element.
    // A block's registers get their slots first, then each element its counts in one loop: both
    // error histograms through one count of x − x̂ in its cell where the edges allow (ErrorCells), as
    // well as the value's. x − x̂ is taken in float where that difference is exact; the others, and
    // every value of a histogram with no vector path, come through the exact double.
    HistogramFiller &errorFill = tally.errorFill, &valuesFill = tally.valuesFill;
    ErrorCells* const cells = tally.cells ? &*tally.cells : nullptr;
    // `codes`: the block's byte codes, counted in pairs with its values (null: the caller counts them;
    // given only when the pass counts pairs).
    const bool pairs = m_pairs;
    auto countBlock = [&](const float* xs, const float* xh, int n, const std::uint8_t* codes)
        __attribute__((noinline)) {
        // (Called rarely, and from the filler's default-target code: not forced inline.)
        auto exactError = [&](int k) { return static_cast<double>(xs[k]) - xh[k]; };
        auto exactValue = [&](int k) { return static_cast<double>(xs[k]); };
        if (codes && !cells) countCodes(ByteCodes{codes, 0}, 0, n); // (the pairs need the cells' slots)
        if (!cells) {
            // (The octave bins of |error| have no vector path of their own: each error goes to add().)
            alignas(64) float ef[kBlock];
            exactDifferences<kFloatLanes>(xs, xh, n, ef);
            errorFill.template addBlock<kFloatLanes>(ef, n, exactError);
            for (int k = 0; k < n; ++k)
                tally.absErrorLog.add(std::fabs(exactError(k)));
            valuesFill.template addBlock<kFloatLanes>(xs, n, exactValue);
            return;
        }
        using F = typename FloatLanes<kFloatLanes>::F;
        using I = typename FloatLanes<kFloatLanes>::I;
        alignas(64) std::int32_t errorSlots[kBlock], valueSlots[kBlock];
        I slowError = {}, slowValue = {};
        int k = 0;
        for (; k + kFloatLanes <= n; k += kFloatLanes) {
            F x, h;
            std::memcpy(&x, xs + k, sizeof x);
            std::memcpy(&h, xh + k, sizeof h);
            I slow;
            I slot = cells->slotsOf<F, I>(exactDifference<F, I>(x, h), slow);
            slowError |= slow;
            std::memcpy(errorSlots + k, &slot, sizeof slot);
            slot = valuesFill.slotsOf<F, I>(x, slow);
            slowValue |= slow;
            std::memcpy(valueSlots + k, &slot, sizeof slot);
        }
        for (int j = k; j < n; ++j)
            errorSlots[j] = cells->slowSlot();
        const bool tail = valuesFill.endBlock<kFloatLanes>(valueSlots, k, n);
        const HistogramFiller::Counter ce = cells->startBlock(n);
        if (codes) {
            std::uint32_t* const table = tally.pairs.startBlock(n, valuesFill, tally.byteCodes[0]);
            for (k = 0; k < n; ++k) {
                ce.add(0, errorSlots[k]);
                ValueCodePairs::count(table, valueSlots[k], codes[k]);
            }
        } else {
            const HistogramFiller::Counter cv = valuesFill.startBlock(n);
            constexpr int kTables = HistogramFiller::kTables;
            static_assert(kTables % ErrorCells::kTables == 0);
            k = 0;
            for (; k + kTables <= n; k += kTables)
                for (int t = 0; t < kTables; ++t) {
                    ce.add(t % ErrorCells::kTables, errorSlots[k + t]);
                    cv.add(t, valueSlots[k + t]);
                }
            for (; k < n; ++k) {
                ce.add(0, errorSlots[k]);
                cv.add(0, valueSlots[k]);
            }
        }
        if (tail || HistogramFiller::anySlowIn(slowError)) [[unlikely]]
            cells->addSlow(errorSlots, n, exactError);
        if (tail || HistogramFiller::anySlowIn(slowValue)) [[unlikely]]
            valuesFill.addSlow<kFloatLanes>(valueSlots, n, exactValue);
    };
    auto countElement = [&](float xi, float xh) QL_INLINE {
        const double e = static_cast<double>(xi) - xh;
        tally.error.add(e);
        tally.absErrorLog.add(std::fabs(e));
        tally.values.add(xi);
    };
    // The importance-weighted sums of a run of elements first + k (finite: all of them are).
    WeightedRuns* const weighted = p.weighted ? &*p.weighted : nullptr;
    auto weigh = [&](const float* xs, const float* xh, int len, std::int64_t first, bool finite) QL_INLINE {
        if (weighted) weighted->add(xs, xh, len, first, finite);
    };
    // A block holding NaN or Inf, element by element (flat indices first + k).
    auto addElements = [&](const float* xs, const float* xh, int len, std::int64_t first, const ClipEdges& e,
                           GroupClipping* row) QL_INLINE {
        weigh(xs, xh, len, first, false);
        for (int k = 0; k < len; ++k) {
            const float xi = xs[k], xhi = xh[k];
            p.stats.addElement(xi, xhi, first + k);
            if (!std::isfinite(xi) || !std::isfinite(xhi)) continue;
            if (row) ClippingStats::addTo(*row, e, floatTarget, xi, xhi);
            ClippingStats::addTo(p.groups, e, floatTarget, xi, xhi);
            countElement(xi, xhi);
        }
    };
    // Short groups (MX and NVFP4 blocks) staged together, then summed group by group in one call that
    // keeps the slice's lanes in registers: the same operations in the same order as a group at a time.
    alignas(64) float bx[kBlock], bh[kBlock];
    alignas(64) std::uint8_t bc[kBlock]; // byte codes, for the pairs (else counted as staged)
    std::array<BatchGroup, kBlock> batch;
    int batched = 0, staged = 0;
    auto addGroups = [&](const BatchGroup* groups, int count) QL_INLINE {
        if (floatTarget)
            p.sums.template addGroups<true>(bx, bh, groups, count);
        else
            p.sums.template addGroups<false>(bx, bh, groups, count);
    };
    auto flushBatch = [&]() __attribute__((noinline)) { // one copy: its callers stay lean
        if (allFinite(bx, bh, staged)) [[likely]] {
            addGroups(batch.data(), batched);
            countBlock(bx, bh, staged, pairs ? bc : nullptr);
            for (int j = 0; weighted && j < batched; ++j) { // (staged groups need not be neighbours)
                const BatchGroup& b = batch[static_cast<std::size_t>(j)];
                weigh(bx + b.offset, bh + b.offset, b.length, b.first, true);
            }
        } else {
            for (int j = 0; j < batched; ++j) {
                const BatchGroup& b = batch[static_cast<std::size_t>(j)];
                const std::uint8_t* const codes = pairs ? bc + b.offset : nullptr;
                if (allFinite(bx + b.offset, bh + b.offset, b.length)) {
                    addGroups(&b, 1);
                    countBlock(bx + b.offset, bh + b.offset, b.length, codes);
                    weigh(bx + b.offset, bh + b.offset, b.length, b.first, true);
                } else {
                    if (codes) countCodes(ByteCodes{codes, 0}, 0, b.length);
                    addElements(bx + b.offset, bh + b.offset, b.length, b.first, b.edges, b.row);
                }
            }
        }
        batched = staged = 0;
    };
    // `count` whole groups of `len` from flat index b, scales g, g + 1, …, staged for the batch (the
    // caller leaves room): values, codes and x̂ a stretch at a time, then each group's entry.
    auto stageGroups = [&](const BlockLoader& load, auto codeAt, std::int64_t b, int count, int len,
                           std::int64_t g) QL_INLINE {
        const int n = count * len;
        load(b, n, bx + staged);
        if (const std::uint8_t* const bytes = pairs ? codeAt.bytes(b) : nullptr)
            std::memcpy(bc + staged, bytes, static_cast<std::size_t>(n));
        else
            countCodes(codeAt, b, n);
        xhatOf.runs(codeAt, b, count, len, params, g, bh + staged);
        for (int j = 0; j < count; ++j) {
            const std::int64_t gj = g + j;
            const ClipEdges e = edgeRule.of(params, gj);
            p.widest.add(gj, e);
            batch[static_cast<std::size_t>(batched++)] = {staged + j * len, len, b + std::int64_t{j} * len, e,
                                                          gj < rows ? &p.clipping[gj] : nullptr};
        }
        staged += n;
    };
    forSegmentsOf(
        from, to, codes, codesFrom, [&](const Segment& seg, const BlockLoader& load, auto codeAt) QL_INLINE {
            if (seg.perElement) { // one group per element: straight into the slice's tables
                flushBatch();
                for (std::int64_t k = 0; k < seg.length; ++k) {
                    const std::int64_t i = seg.begin + k, g = seg.scale + k;
                    const std::int32_t c = codeAt(i);
                    const float xi = load(i),
                                xh = xhatOf(c, scales[static_cast<std::size_t>(g)], params.zeroPointOf(g));
                    const ClipEdges e = edgeRule.of(params, g);
                    p.widest.add(g, e);
                    p.stats.addElement(xi, xh, i);
                    countCode(c);
                    weigh(&xi, &xh, 1, i, false);
                    if (!std::isfinite(xi) || !std::isfinite(xh)) continue;
                    ClippingStats::addTo(p.clipping[g], e, floatTarget, xi, xh);
                    ClippingStats::addTo(p.groups, e, floatTarget, xi, xh);
                    countElement(xi, xh);
                }
                return;
            }
            if (seg.runLength != 0 || seg.length < kBlock) // short groups, staged for the batch
                return forStagedGroups(seg, staged, flushBatch,
                                       [&](std::int64_t b, std::int64_t g, int count, int len)
                                           QL_INLINE { stageGroups(load, codeAt, b, count, len, g); });
            const std::int64_t g = seg.scale;
            const ClipEdges e = edgeRule.of(params, g);
            p.widest.add(g, e);
            GroupClipping* const row = g < rows ? &p.clipping[g] : nullptr;
            // A long group, a block at a time: codes counted and x̂ made in one read, then the sums of an
            // all-finite block in vector lanes; a block with NaN/Inf takes the element path.
            flushBatch();
            p.sums.beginGroup(e);
            forBlocksOf(seg, load, codeAt, xhatOf, params,
                        [&](std::int64_t b, int len, const float* xs, const float* xh) QL_INLINE {
                            const std::uint8_t* const bytes = pairs ? codeAt.bytes(b) : nullptr;
                            if (!bytes) countCodes(codeAt, b, len);
                            if (allFinite(xs, xh, len)) [[likely]] {
                                if (floatTarget)
                                    p.sums.template addBlock<true>(xs, xh, len, b);
                                else
                                    p.sums.template addBlock<false>(xs, xh, len, b);
                                countBlock(xs, xh, len, bytes);
                                weigh(xs, xh, len, b, true);
                                return;
                            }
                            if (bytes) countCodes(codeAt, b, len);
                            addElements(xs, xh, len, b, e, row);
                        });
            if (row)
                p.sums.endGroup(*row);
            else
                p.sums.endGroupWithoutRow();
        });
    flushBatch();
}

TensorAnalysis Pass::finish(std::optional<WeightedError>& weighted) {
    TensorAnalysis& a = m_a;
    WidestGroup widest;
    GroupClipping total; // of every group, in slice order
    const bool signedBytes = m_codes.target() == Target::Int8 || m_codes.target() == Target::Int4;
    for (const std::unique_ptr<SliceTotals>& slice :
         m_slices) {          // in slice order: the sums never depend on timing
        if (!slice) continue; // a slice with no elements
        SliceTotals& p = *slice;
        p.sums.finish(p.stats, p.groups);
        a.stats.merge(p.stats);
        p.clipping.mergeShared();
        total.merge(p.groups);
        widest.merge(p.widest);
        if (p.weighted) {
            if (!weighted) weighted.emplace();
            weighted->merge(p.weighted->sums);
        }
    }
    for (const std::unique_ptr<WorkerCounts>& worker : m_workers) { // counts: the same in any order
        if (!worker) continue;
        WorkerCounts& tally = *worker;
        tally.flush();
        a.error.merge(tally.error);
        a.absErrorLog.merge(tally.absErrorLog);
        a.values.merge(tally.values);
        if (m_wide) a.codes.merge(tally.wideCodes);
        for (int b = 0; b < 256 && !m_wide; ++b)
            if (const std::int64_t count = tally.byteCodes[0][static_cast<std::size_t>(b)] +
                                           tally.byteCodes[1][static_cast<std::size_t>(b)] +
                                           tally.byteCodes[2][static_cast<std::size_t>(b)] +
                                           tally.byteCodes[3][static_cast<std::size_t>(b)])
                a.codes.add(signedBytes ? static_cast<std::int8_t>(b) : b, count);
    }
    m_slices.clear();
    m_workers.clear();
    detail::finishAnalysis(a, m_plan, m_params, widest.result(m_edgeRule.of(m_params, 0)), m_opt);
    a.clipping.setTotal(total);
    return std::move(a);
}

std::unique_ptr<SlicedPass> slicedPass(const ResolvedSpec& plan, const QuantParams& params,
                                       const Codes& codes, const ValuesView& x, const AnalysisOptions& opt,
                                       const std::vector<std::int64_t>& sliceStarts, unsigned workers) {
    return std::make_unique<Pass>(plan, params, codes, x, opt, sliceStarts, workers, true);
}

TensorAnalysis analyzeFast(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                           const ValuesView& x, const AnalysisOptions& opt,
                           const ImportanceWeights* importance, std::optional<WeightedError>& weighted) {
    const std::int64_t n = x.count, slices = sliceCount(n);
    std::vector<std::int64_t> starts(static_cast<std::size_t>(slices));
    for (std::int64_t s = 0; s < slices; ++s)
        starts[static_cast<std::size_t>(s)] = n * s / slices;
    Pass pass(plan, params, codes, x, opt, starts, sliceWorkers(slices, opt.threads), false);
    if (importance) pass.weigh(*importance);
    forEachSlice(
        slices, opt.threads,
        [&](std::int64_t s, unsigned w) {
            pass.addPart(s, starts[static_cast<std::size_t>(s)],
                         s + 1 < slices ? starts[static_cast<std::size_t>(s + 1)] : n, w, nullptr);
        },
        opt.progress);
    return pass.finish(weighted);
}

#undef QL_INLINE

} // namespace ql::detail::QL_ANALYZER_NS
