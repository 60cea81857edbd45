#pragma once
// Importance files as the jobs use them: each weight's activation statistics found by its name (the
// name itself, its module's for QuantLens's own statistics, a Paddle "X.w_0" as module X, or its
// llama.cpp name for an imatrix made on the GGUF of the same model), laid along the input-channel
// axis its role reduces over (quant/weight_role.h), and the weighted error of a quantized tensor.
#include "analysis/weighted_error.h"
#include "io/importance_file.h"
#include "io/tensor_source.h"
#include "quant/params.h"
#include "quant/resolved_spec.h"
#include "quant/weight_role.h"

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>

namespace ql {

class Importance {
public:
    explicit Importance(ImportanceFile file);
    /// Throws FileError naming the file and the reason.
    static std::shared_ptr<const Importance> open(const std::string& path);

    const ImportanceFile& file() const { return m_file; }

    struct Weights {
        std::span<const float> sqMean;
        std::int64_t channels = 0;
        int matrices = 1;
        std::int64_t inner = 1; // elements per input channel step (weightedError's `inner`)
        std::string origin;     // "file: entry"
    };
    /// The statistics for a weight whose role is `role` (job/job.h roleOf: its input channels are on
    /// the role's reduction axis; a depthwise conv's on its filter axis), or nullopt with `why` (no
    /// entry; an entry of another size).
    std::optional<Weights> forTensor(const TensorInfo& info, const RoleAxes& role, std::string& why) const;

private:
    ImportanceFile m_file;
    std::map<std::string, std::string> m_byGgufName; // an entry's llama.cpp name -> its name in the file
};

/// The weighted error of `codes` against the original values `x` (dequantized with the plan's
/// arithmetic, element by element as the reference does).
WeightedError weightedErrorOf(const ResolvedSpec& plan, const QuantParams& params, const Codes& codes,
                              std::span<const float> x, const Importance::Weights& weights);

} // namespace ql
