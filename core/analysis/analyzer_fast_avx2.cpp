// The fast analysis pass for AVX2 and F16C: eight float lanes (analyzer_fast.h).
#include "analysis/analyzer_fast_deps.h"

#ifdef QL_ANALYZER_X86
#pragma GCC target("avx2,f16c")
#define QL_ANALYZER_NS avx2
#define QL_ANALYZER_LANES 8
#define QL_ANALYZER_AVX2 1 // (a target pragma defines no __AVX2__)
#include "analysis/analyzer_fast.h"
#endif
