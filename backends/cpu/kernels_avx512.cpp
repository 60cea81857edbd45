// The vector kernels built for avx512 (flags set in CMakeLists.txt; see kernels_impl.h).
#define QL_KERNEL_NS avx512
#define QL_KERNEL_WIDTH 16
#include "cpu/kernels_impl.h"

namespace ql::cpu {
KernelSet pick_avx512(const ResolvedSpec& plan, DType dtype) {
    return avx512::pick(plan, dtype);
}
} // namespace ql::cpu
