# quantlens-cli evaluate: ONNX Runtime loaded at run time, on PaddleOCR's models from npm and a
# transformer exported here by PyTorch, the float run checked bit for bit against onnxruntime-node. The
# runtime comes from scripts/setup-onnxruntime.sh (scripts/test.sh runs it); without it the suite fails.
if(QUANTLENS_ONNX AND TARGET quantlens-cli)
    add_library(ql_ort_old SHARED ${CMAKE_CURRENT_SOURCE_DIR}/ort_standin/ort_old.c)
    add_library(ql_ort_none SHARED ${CMAKE_CURRENT_SOURCE_DIR}/ort_standin/ort_old.c)
    target_compile_definitions(ql_ort_none PRIVATE QL_NO_ENTRY_POINT)
    set_target_properties(ql_ort_old ql_ort_none PROPERTIES AUTOMOC OFF)
    ql_add_test(tst_evaluate)
    target_compile_definitions(tst_evaluate PRIVATE QUANTLENS_CLI="$<TARGET_FILE:quantlens-cli>"
        QUANTLENS_ORT_OLD="$<TARGET_FILE:ql_ort_old>"
        QUANTLENS_ORT_NONE="$<TARGET_FILE:ql_ort_none>"
        QUANTLENS_ORT_CACHE="${PROJECT_SOURCE_DIR}/build/onnxruntime")
    add_dependencies(tst_evaluate quantlens-cli ql_ort_old ql_ort_none)
    # evaluate --activations read back by plan --importance, and plan --objective output.
    ql_add_test(tst_evaluate_importance)
    target_compile_definitions(tst_evaluate_importance PRIVATE QUANTLENS_CLI="$<TARGET_FILE:quantlens-cli>"
        QUANTLENS_ORT_CACHE="${PROJECT_SOURCE_DIR}/build/onnxruntime")
    add_dependencies(tst_evaluate_importance quantlens-cli)
    foreach(suite tst_evaluate tst_evaluate_importance)
        set_tests_properties(${suite} PROPERTIES TIMEOUT 900 ENVIRONMENT
            "QT_QPA_PLATFORM=offscreen;LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/lsan.supp:print_suppressions=0")
    endforeach()
endif()
