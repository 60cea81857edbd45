// The vector kernels built for avx2 (flags set in CMakeLists.txt; see kernels_impl.h).
#define QL_KERNEL_NS avx2
#define QL_KERNEL_WIDTH 8
#include "cpu/kernels_impl.h"

namespace ql::cpu {
KernelSet pick_avx2(const ResolvedSpec& plan, DType dtype) {
    return avx2::pick(plan, dtype);
}
} // namespace ql::cpu
