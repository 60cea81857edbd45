#pragma once
// Quantization targets: what one code is, and its range.
#include "tensor/dtype.h"
#include "tensor/float_formats.h"

#include <cstdint>
#include <optional>
#include <string_view>

namespace ql {

enum class Target : std::uint8_t { Int8, UInt8, Int4, UInt4, Int32, Fp8E4M3, Fp8E5M2, Fp4E2M1 };

bool isFloatTarget(Target t);
bool isSubByte(Target t);
/// Integer range of the codes; narrow drops the most negative code of signed targets ([-127,127]).
std::int64_t codeMin(Target t, bool narrow = false);
std::int64_t codeMax(Target t);
/// The mini-float format of a floating target (E4M3FN, E5M2, E2M1).
MiniFloat miniFloatOf(Target t);
/// The dtype a code of this target is stored as, one per byte (or I32).
DType codeDType(Target t);
/// "int8", "fp8-e4m3", ... (the CLI's --dtype names).
std::string_view nameOf(Target t);
std::optional<Target> targetFromName(std::string_view name);

} // namespace ql
