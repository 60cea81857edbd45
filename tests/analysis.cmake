# core/analysis and core/backend suites (issue 4).
ql_add_test(tst_analysis LIBS quantlens_backends)
ql_add_test(tst_analysis_report LIBS quantlens_backends)
ql_add_test(tst_backend LIBS quantlens_backends)
