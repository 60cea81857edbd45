# GUI suites (issue 5): item models, the real main window driven under the offscreen platform,
# and a screenshot of the window with results for the bundled sample model.
if(QUANTLENS_GUI)
    ql_add_test(tst_models LIBS quantlens_widgets)
    ql_add_test(tst_gui_window LIBS quantlens_gui_app)
    ql_add_test(tst_gui_screenshot LIBS quantlens_gui_app)
    set_tests_properties(tst_gui_window tst_gui_screenshot PROPERTIES TIMEOUT 300)
endif()
