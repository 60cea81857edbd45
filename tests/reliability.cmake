# Reliability through the CLI: the one check of what a run writes against what it reads
# (core/io/run_files) in every command, and one-element tensors under every calibration.
if(TARGET quantlens-cli)
    foreach(suite tst_run_files tst_one_element)
        ql_add_test(${suite})
        target_compile_definitions(${suite} PRIVATE QUANTLENS_CLI="$<TARGET_FILE:quantlens-cli>")
        add_dependencies(${suite} quantlens-cli)
    endforeach()
endif()
# The readers of untrusted files fuzzed for a few seconds each (QUANTLENS_FUZZ_SECONDS to change it).
if(QUANTLENS_ONNX)
    ql_add_test(tst_fuzz_parsers)
    target_link_libraries(tst_fuzz_parsers PRIVATE onnx_proto protobuf::libprotobuf)
    set_tests_properties(tst_fuzz_parsers PROPERTIES TIMEOUT 300)
endif()
