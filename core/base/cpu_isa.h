#pragma once
// The widest instruction set this CPU offers QuantLens's vector code: the CPU kernels and the
// analysis pass are each built for the x86-64 baseline, AVX2 (with FMA and F16C) and AVX-512
// (F, BW, VL, DQ), and run the widest of them. QUANTLENS_CPU_ISA=sse2|avx2 caps the choice, so
// tests and benchmarks can run every build on one machine; it never selects an ISA the CPU lacks.

namespace ql {

enum class CpuIsa { Baseline, Avx2, Avx512 };

/// Decided once per process (the CPU and the environment variable).
CpuIsa widestCpuIsa();

} // namespace ql
