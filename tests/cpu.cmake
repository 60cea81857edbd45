# cpu backend conformance: every built backend against cpu-reference.
ql_add_test(tst_backend_conformance LIBS quantlens_backends)
# The kernels are built per ISA and picked at run time: run the narrower builds too, so a CI
# machine checks every copy whatever CPU it has (QUANTLENS_CPU_ISA only ever narrows the choice).
foreach(isa sse2 avx2)
    ql_suite_command(command tst_backend_conformance)
    add_test(NAME tst_backend_conformance_${isa} COMMAND ${command})
    set_tests_properties(tst_backend_conformance_${isa} PROPERTIES
        ENVIRONMENT "QT_QPA_PLATFORM=offscreen;QUANTLENS_CPU_ISA=${isa}")
endforeach()
# What the AVX2 and AVX-512 builds share with the rest of the program (weak symbols: the linker keeps
# one copy for every caller) must be baseline code, or a CPU without the extension could run theirs.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|i.86")
    add_test(NAME isa_builds_share_only_baseline_code
        COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/isa_builds_share_only_baseline_code.sh
            $<TARGET_FILE:quantlens_core> $<TARGET_FILE:quantlens_backend_cpu>)
endif()
