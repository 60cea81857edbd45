# The mixed-precision planner (issue 16): solver against brute force, measurements, outputs, CLI.
ql_add_test(tst_plan LIBS quantlens_backends)
if(TARGET quantlens-cli)
    target_compile_definitions(tst_plan PRIVATE QUANTLENS_CLI="$<TARGET_FILE:quantlens-cli>")
    add_dependencies(tst_plan quantlens-cli)
endif()
set_tests_properties(tst_plan PROPERTIES TIMEOUT 600)
