// The fast analysis pass for AVX-512: eight float lanes, the wider registers for the rest
// (analyzer_fast.h).
#include "analysis/analyzer_fast_deps.h"

#ifdef QL_ANALYZER_X86
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx2,f16c")
#define QL_ANALYZER_NS avx512
#define QL_ANALYZER_LANES 8
// AVX2's instructions are this build's too (a target pragma defines no __AVX2__).
#define QL_ANALYZER_AVX2 1
#include "analysis/analyzer_fast.h"
#endif
