#include "quant/convention.h"

namespace ql {

std::string_view nameOf(ScaleOp op) {
    switch (op) {
    case ScaleOp::Divide:
        return "divide";
    case ScaleOp::MultiplyReciprocal:
        return "multiply by reciprocal";
    case ScaleOp::Multiply:
        return "multiply";
    case ScaleOp::MultiplyTwice:
        return "multiply twice (sqrt mode)";
    }
    return "";
}

std::string_view nameOf(ZeroPointStage s) {
    return s == ZeroPointStage::BeforeRounding ? "before rounding" : "after rounding";
}

std::string_view nameOf(Rounding r) {
    switch (r) {
    case Rounding::HalfToEven:
        return "half-even";
    case Rounding::HalfAwayFromZero:
        return "half-away";
    case Rounding::Floor:
        return "floor";
    case Rounding::Ceil:
        return "ceil";
    case Rounding::Trunc:
        return "trunc";
    }
    return "";
}

std::optional<Rounding> roundingFromName(std::string_view name) {
    if (name == "round" || name == "rint") return Rounding::HalfToEven;
    for (auto r :
         {Rounding::HalfToEven, Rounding::HalfAwayFromZero, Rounding::Floor, Rounding::Ceil, Rounding::Trunc})
        if (nameOf(r) == name) return r;
    return std::nullopt;
}

} // namespace ql
