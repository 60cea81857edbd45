# ONNX models in (issue 14): the native reader, against fixtures python3-onnx and numpy build.
if(QUANTLENS_ONNX)
    ql_add_test(tst_onnx)
    set_tests_properties(tst_onnx PROPERTIES TIMEOUT 300)
    if(TARGET quantlens-cli) # `inspect` names each QDQ weight's scheme
        target_compile_definitions(tst_onnx PRIVATE QUANTLENS_CLI="$<TARGET_FILE:quantlens-cli>")
        add_dependencies(tst_onnx quantlens-cli)
    endif()
endif()
