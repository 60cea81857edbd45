#include "base/cpu_isa.h"

#include <cstdlib>
#include <string>

namespace ql {

CpuIsa widestCpuIsa() {
#if defined(__x86_64__) && defined(__GNUC__)
    static const CpuIsa widest = [] {
        __builtin_cpu_init();
        const char* cap = std::getenv("QUANTLENS_CPU_ISA");
        const std::string want = cap ? cap : "";
        const bool avx2 =
            __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
        const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                            __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
        if (avx512 && (want.empty() || want == "avx512")) return CpuIsa::Avx512;
        if (avx2 && want != "sse2") return CpuIsa::Avx2;
        return CpuIsa::Baseline;
    }();
    return widest;
#else
    return CpuIsa::Baseline;
#endif
}

} // namespace ql
