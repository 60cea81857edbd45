# core/analysis, core/backend and core/job suites.
ql_add_test(tst_analysis LIBS quantlens_backends)
ql_add_test(tst_analysis_report LIBS quantlens_backends)
# The clipping plot's spans of groups (core/analysis/clip_spans).
ql_add_test(tst_clip_spans)
ql_add_test(tst_backend LIBS quantlens_backends)
# The fast analysis against its scalar oracle over the conformance grid: the longest suite (minutes
# under the sanitizers), so its rows run in two halves side by side.
ql_add_test(tst_fast_analysis LIBS quantlens_backends PARTS 2)
# It fills histograms with the pass's block filler, whose 64-byte vectors are built here for the baseline ISA.
set_source_files_properties(tst_fast_analysis.cpp PROPERTIES COMPILE_OPTIONS "-Wno-psabi")
# core/job: the one pipeline the CLI and the GUI run.
ql_add_test(tst_job LIBS quantlens_backends)
# Reports read back (the GUI opening a report, merged or its own) and bounded model-run reports.
ql_add_test(tst_report_read LIBS quantlens_backends)
# The whole-model summary: sizes and bits per weight before and after, worked out by hand.
ql_add_test(tst_model_summary LIBS quantlens_backends)
# The histograms' edges from the plan and the params (report format version 2).
ql_add_test(tst_histogram_edges LIBS quantlens_backends)
# The importance-weighted sums a run at a time (the fast pass's way) against the oracle.
ql_add_test(tst_weighted_runs LIBS quantlens_backends)
