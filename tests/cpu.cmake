# cpu backend conformance (issue 6): every built backend against cpu-reference.
ql_add_test(tst_backend_conformance LIBS quantlens_backends)
# The kernels are built per ISA and picked at run time: run the narrower builds too, so a CI
# machine checks every copy whatever CPU it has (QUANTLENS_CPU_ISA only ever narrows the choice).
foreach(isa sse2 avx2)
    ql_suite_command(command tst_backend_conformance)
    add_test(NAME tst_backend_conformance_${isa} COMMAND ${command})
    set_tests_properties(tst_backend_conformance_${isa} PROPERTIES
        ENVIRONMENT "QT_QPA_PLATFORM=offscreen;QUANTLENS_CPU_ISA=${isa}")
endforeach()
