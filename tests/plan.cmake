# The mixed-precision planner: solver against brute force, measurements, outputs, CLI;
# tst_plan_roles: planning any weight by its role.
foreach(suite tst_plan tst_plan_roles)
    ql_add_test(${suite} LIBS quantlens_backends)
    if(TARGET quantlens-cli)
        target_compile_definitions(${suite} PRIVATE QUANTLENS_CLI="$<TARGET_FILE:quantlens-cli>")
        add_dependencies(${suite} quantlens-cli)
    endif()
    set_tests_properties(${suite} PROPERTIES TIMEOUT 600)
endforeach()
