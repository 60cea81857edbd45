// The vector kernels built for sse2 (flags set in CMakeLists.txt; see kernels_impl.h).
#define QL_KERNEL_NS sse2
#define QL_KERNEL_WIDTH 4
#include "cpu/kernels_impl.h"

namespace ql::cpu {
KernelSet pick_sse2(const ResolvedSpec& plan, DType dtype) {
    return sse2::pick(plan, dtype);
}
} // namespace ql::cpu
