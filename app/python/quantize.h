#pragma once
// quantlens.quantize and quantlens.compare: one NumPy array through core's tensor run
// (job/tensor_measurement.h), the step every job of the CLI repeats, and the results as NumPy views of what
// core made.
#include "job/tensor_measurement.h"

#include <memory>
#include <pybind11/pybind11.h>

namespace ql::py {

/// One side's outcome, kept whole: NumPy arrays of the result view its memory.
struct Quantized {
    TensorMeasurement run;
    bool packed = false;               // codes as the operator packs them
    std::vector<std::uint8_t> nibbles; // packed: two codes per byte, low nibble first
    std::vector<std::int32_t> words;   // packed: eight int4 per int32 word (Ascend dstType 3)
    Shape packedShape;
};

/// What quantize() returns: codes, parameters, dequantize() and the report's statistics.
class QuantizeResult {
public:
    explicit QuantizeResult(std::shared_ptr<const Quantized> q)
        : m_q(std::move(q)) {}
    const Quantized& get() const { return *m_q; }

private:
    std::shared_ptr<const Quantized> m_q;
};

/// One tensor of a model file, as `quantlens-cli quantize FILE --tensor NAME` quantizes it: `kw` holds
/// quantize()'s keywords but input_dtype and name.
pybind11::object quantizeTensor(const TensorSource& source, const TensorInfo& info,
                                const pybind11::kwargs& kw);

/// Registers QuantizeResult, CompareResult, quantize() and compare() on the module.
void registerQuantize(pybind11::module_& m);

} // namespace ql::py
