target_sources(quantlens_core PRIVATE
    analysis/error_stats.cpp
    analysis/histogram.cpp
    analysis/error_cells.cpp
    analysis/code_diff.cpp
    analysis/code_stats.cpp
    analysis/clipping.cpp
    analysis/clip_spans.cpp
    analysis/analyzer.cpp
    analysis/analyzer_fast_baseline.cpp
    analysis/analyzer_fast_avx2.cpp
    analysis/analyzer_fast_avx512.cpp
    analysis/analyzer_reference.cpp
    analysis/comparison.cpp
    analysis/mismatch_causes.cpp
    analysis/weighted_error.cpp
    analysis/accumulators.cpp
    analysis/statistics_agreement.cpp)
# The analysis pass is a hot loop built per ISA (analyzer_fast.h): optimised like the CPU kernels.
set_source_files_properties(analysis/analyzer.cpp analysis/analyzer_fast_baseline.cpp analysis/analyzer_fast_avx2.cpp
                            analysis/analyzer_fast_avx512.cpp PROPERTIES COMPILE_OPTIONS "${QUANTLENS_HOT_OPT};-Wno-psabi")
