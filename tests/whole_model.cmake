# Whole-model runs in the CLI: weights only by default, spec mistakes as usage errors.
if(TARGET quantlens-cli)
    ql_add_test(tst_whole_model_cli)
    target_compile_definitions(tst_whole_model_cli PRIVATE QUANTLENS_CLI="$<TARGET_FILE:quantlens-cli>")
    add_dependencies(tst_whole_model_cli quantlens-cli)
    set_tests_properties(tst_whole_model_cli PROPERTIES TIMEOUT 300)
endif()
