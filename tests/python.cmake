# The Python module's suites (tests/python/test_*.py), its example and its benchmark, run by ctest with
# Debian's interpreter and the module in the build folder. Built with QUANTLENS_PYTHON; a missing NumPy
# (or h5py, onnx) fails them, as any missing dependency of a suite does.
if(NOT TARGET quantlens_python)
    return()
endif()
# Under AddressSanitizer they are not registered: CPython is not built with it, so the instrumented
# module loads only with libasan and libubsan preloaded into the interpreter, and LeakSanitizer would
# then report the interpreter's own allocations it never frees at exit (app/python/README.md).
if(CMAKE_CXX_FLAGS MATCHES "-fsanitize=")
    message(STATUS "Python suites: not run under a sanitizer build (see app/python/README.md)")
    return()
endif()

set(_py_env
    "PYTHONPATH=${PROJECT_BINARY_DIR}:${CMAKE_CURRENT_SOURCE_DIR}/python"
    "QUANTLENS_CLI=$<TARGET_FILE:quantlens-cli>"
    "QUANTLENS_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
    "QUANTLENS_BINARY_DIR=${PROJECT_BINARY_DIR}"
    "PYTHONDONTWRITEBYTECODE=1")
file(GLOB _py_suites CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/python/test_*.py)
foreach(suite ${_py_suites})
    get_filename_component(name ${suite} NAME_WE)
    add_test(NAME python_${name} COMMAND ${QUANTLENS_PYTHON_EXECUTABLE} -m unittest -v ${name}
             WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/python)
    set_tests_properties(python_${name} PROPERTIES ENVIRONMENT "${_py_env}")
endforeach()
# The suites that time things want the cores to themselves.
set_tests_properties(python_test_zero_copy PROPERTIES RUN_SERIAL TRUE)

add_test(NAME python_example_tensorrt_int4 COMMAND ${QUANTLENS_PYTHON_EXECUTABLE}
         ${PROJECT_SOURCE_DIR}/app/python/examples/tensorrt_int4_golden.py
         --plot ${CMAKE_CURRENT_BINARY_DIR}/int4_error_histogram.png)
set_tests_properties(python_example_tensorrt_int4 PROPERTIES ENVIRONMENT "${_py_env}")

# quantize() from Python within 1.2x of the same job timed in C++ (prints the ratio).
add_test(NAME python_bench_quantize COMMAND ${QUANTLENS_PYTHON_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/python/bench_quantize.py)
set_tests_properties(python_bench_quantize PROPERTIES ENVIRONMENT "${_py_env}" RUN_SERIAL TRUE)

# The build folder imports the package as scripts/test.sh leaves it, and `cmake --install` installs it.
add_test(NAME python_import_from_build_folder COMMAND ${QUANTLENS_PYTHON_EXECUTABLE} -c "import quantlens; print(quantlens.__file__)"
         WORKING_DIRECTORY ${PROJECT_BINARY_DIR})
add_test(NAME python_install COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/python/install_check.sh
         ${CMAKE_COMMAND} ${PROJECT_BINARY_DIR} ${QUANTLENS_PYTHON_EXECUTABLE} ${QUANTLENS_PYTHON_INSTALL_DIR})
