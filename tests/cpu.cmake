# cpu backend conformance (issue 6): every built backend against cpu-reference.
ql_add_test(tst_cpu_conformance LIBS quantlens_backends)
