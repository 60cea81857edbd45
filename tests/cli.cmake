# quantlens-cli end-to-end suite: runs the built binary on fixtures written by scripts/cli_fixtures.py.
if(TARGET quantlens-cli)
    ql_add_test(tst_cli LIBS quantlens_backends)
    target_compile_definitions(tst_cli PRIVATE QUANTLENS_CLI="$<TARGET_FILE:quantlens-cli>")
    add_dependencies(tst_cli quantlens-cli)
endif()
# A run's notes as values, in the words the CLI prints and the app shows.
ql_add_test(tst_run_notes)
# The CI gate (quantlens-cli check): rules, JUnit XML, HTML, exit codes.
if(TARGET quantlens-cli)
    ql_add_test(tst_check LIBS quantlens_backends)
    target_compile_definitions(tst_check PRIVATE QUANTLENS_CLI="$<TARGET_FILE:quantlens-cli>")
    add_dependencies(tst_check quantlens-cli)
endif()
# diff: two checkpoints tensor by tensor, names matched exactly and through the GGUF naming.
if(TARGET quantlens-cli)
    ql_add_test(tst_diff)
    target_compile_definitions(tst_diff PRIVATE QUANTLENS_CLI="$<TARGET_FILE:quantlens-cli>")
    add_dependencies(tst_diff quantlens-cli)
    # Codes compared (GGUF, ONNX QDQ, --requantize) and llama.cpp's q/k row order undone.
    ql_add_test(tst_diff_codes)
    target_compile_definitions(tst_diff_codes PRIVATE QUANTLENS_CLI="$<TARGET_FILE:quantlens-cli>")
    add_dependencies(tst_diff_codes quantlens-cli)
endif()
