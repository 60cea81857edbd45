# GUI suites: item models, the real main window driven under the offscreen platform,
# and a screenshot of the window with results for the bundled sample model.
if(QUANTLENS_GUI)
    ql_add_test(tst_models LIBS quantlens_widgets)
    ql_add_test(tst_job_runner LIBS quantlens_widgets)
    ql_add_test(tst_gui_window LIBS quantlens_gui_app)
    ql_add_test(tst_gui_screenshot LIBS quantlens_gui_app)
    ql_add_test(tst_gui_plan LIBS quantlens_gui_app)
    ql_add_test(tst_gui_diff LIBS quantlens_gui_app)
    ql_add_test(tst_gui_export LIBS quantlens_gui_app)
    ql_add_test(tst_gui_layout LIBS quantlens_gui_app) # the window at 1280x800 and 1920x1080, docks
    ql_add_test(tst_gui_models LIBS quantlens_gui_app) # conv, recurrent, transformer, GGUF in a row
    ql_add_test(tst_gui_role_axes LIBS quantlens_gui_app) # a tensor run alone plans as Quantize all
    ql_add_test(tst_gui_start LIBS quantlens_gui_app) # runs the app: --help, --screenshot, start-up session
    target_compile_definitions(tst_gui_start PRIVATE QUANTLENS_APP="$<TARGET_FILE:quantlens>")
    add_dependencies(tst_gui_start quantlens)
    if(QUANTLENS_ONNX)
        target_compile_definitions(tst_gui_start PRIVATE QUANTLENS_TEST_ONNX=1)
    endif()
    set_tests_properties(tst_gui_window tst_gui_screenshot tst_gui_plan tst_gui_diff tst_gui_export tst_gui_start
                         tst_gui_layout tst_gui_role_axes PROPERTIES TIMEOUT 300)
    set_tests_properties(tst_gui_models PROPERTIES TIMEOUT 900)
    # Its one test function runs 24 whole-model jobs and their CLI twins: minutes under the sanitizers,
    # past QtTest's own 300 s watchdog for a function.
    set_property(TEST tst_gui_models APPEND PROPERTY ENVIRONMENT "QTEST_FUNCTION_TIMEOUT=870000")
    if(QUANTLENS_ONNX) # the Model tab: ONNX Runtime where tst_evaluate finds it, its leaks suppressed
        ql_add_test(tst_gui_model_error LIBS quantlens_gui_app)
        target_compile_definitions(tst_gui_model_error PRIVATE QUANTLENS_ORT_CACHE="${PROJECT_SOURCE_DIR}/build/onnxruntime")
        set_tests_properties(tst_gui_model_error PROPERTIES TIMEOUT 300 ENVIRONMENT
            "QT_QPA_PLATFORM=offscreen;LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/lsan.supp:print_suppressions=0")
    endif()
    if(TARGET quantlens-cli) # the window's whole-model report and diff against the CLI's
        foreach(suite tst_gui_window tst_gui_diff tst_gui_export tst_gui_models)
            target_compile_definitions(${suite} PRIVATE QUANTLENS_CLI="$<TARGET_FILE:quantlens-cli>")
            add_dependencies(${suite} quantlens-cli)
        endforeach()
    endif()
endif()
