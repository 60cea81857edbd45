# Small files whose metadata claims big costs: each case runs quantlens-cli under
# time and memory limits.
if(TARGET quantlens-cli)
    ql_add_test(tst_resource_bounds)
    target_compile_definitions(tst_resource_bounds PRIVATE QUANTLENS_CLI="$<TARGET_FILE:quantlens-cli>")
    add_dependencies(tst_resource_bounds quantlens-cli)
    set_tests_properties(tst_resource_bounds PROPERTIES TIMEOUT 900)
endif()
