# ONNX models in: the native reader, against fixtures python3-onnx and numpy build.
if(QUANTLENS_ONNX)
    ql_add_test(tst_onnx)
    set_tests_properties(tst_onnx PROPERTIES TIMEOUT 300)
    if(TARGET quantlens-cli) # `inspect` names each QDQ weight's scheme
        target_compile_definitions(tst_onnx PRIVATE QUANTLENS_CLI="$<TARGET_FILE:quantlens-cli>")
        add_dependencies(tst_onnx quantlens-cli)
        # A conv quantized through its [O, I*kh*kw] view, exported as QDQ and read back.
        ql_add_test(tst_qdq_views)
        target_compile_definitions(tst_qdq_views PRIVATE QUANTLENS_CLI="$<TARGET_FILE:quantlens-cli>")
        add_dependencies(tst_qdq_views quantlens-cli)
    endif()
endif()
# Weights in their model: the role table, each ONNX weight's consumer, per-tensor axes.
ql_add_test(tst_weight_roles LIBS quantlens_backends)
set_tests_properties(tst_weight_roles PROPERTIES TIMEOUT 300)
