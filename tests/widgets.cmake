# Widget suites: the pages and the tensor list as people expect them, each rough edge
# with a check, driven under the offscreen platform.
if(QUANTLENS_GUI)
    ql_add_test(tst_widgets_browser LIBS quantlens_widgets)
    ql_add_test(tst_widgets_plots LIBS quantlens_widgets quantlens_backends)
endif()
