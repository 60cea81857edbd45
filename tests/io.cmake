# Suites of core/io (issue 3): safetensors, HDF5, export, real models, and the parser fuzzer.
ql_add_test(tst_safetensors)
ql_add_test(tst_safetensors_errors)
ql_add_test(tst_gguf)
if(TARGET quantlens-cli) # a whole-model run says what it does not read
    target_compile_definitions(tst_gguf PRIVATE QUANTLENS_CLI="$<TARGET_FILE:quantlens-cli>")
    add_dependencies(tst_gguf quantlens-cli)
endif()
ql_add_test(tst_export)
ql_add_test(tst_real_model)
set_tests_properties(tst_real_model PROPERTIES TIMEOUT 600)
if(QUANTLENS_HDF5)
    ql_add_test(tst_hdf5)
    if(TARGET quantlens-cli) # inspect says what it leaves out, and why
        target_compile_definitions(tst_hdf5 PRIVATE QUANTLENS_CLI="$<TARGET_FILE:quantlens-cli>")
        add_dependencies(tst_hdf5 quantlens-cli)
    endif()
endif()
include(${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz.cmake)
# Crafted files, odd options and interruptions: one regression row per class.
ql_add_test(tst_bad_input)
set_tests_properties(tst_bad_input PROPERTIES TIMEOUT 300 ENVIRONMENT
    "QT_QPA_PLATFORM=offscreen;LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_SOURCE_DIR}/lsan_hdf5.supp;ASAN_OPTIONS=fast_unwind_on_malloc=0")
if(TARGET quantlens-cli) # an export that fails on a full disk, run as the CLI process
    target_compile_definitions(tst_bad_input PRIVATE QUANTLENS_CLI="$<TARGET_FILE:quantlens-cli>")
    add_dependencies(tst_bad_input quantlens-cli)
endif()
# compressed-tensors export, run as the CLI and read back by an independent Python reader.
if(TARGET quantlens-cli)
    ql_add_test(tst_compressed_tensors LIBS quantlens_backends)
    target_compile_definitions(tst_compressed_tensors PRIVATE QUANTLENS_CLI="$<TARGET_FILE:quantlens-cli>")
    add_dependencies(tst_compressed_tensors quantlens-cli)
    set_tests_properties(tst_compressed_tensors PROPERTIES TIMEOUT 600)
endif()
# Every export round-trips (issue 39): each preset family in each format, read back and diffed.
if(TARGET quantlens-cli)
    ql_add_test(tst_export_roundtrip LIBS quantlens_backends)
    target_compile_definitions(tst_export_roundtrip PRIVATE QUANTLENS_CLI="$<TARGET_FILE:quantlens-cli>")
    if(QUANTLENS_HDF5)
        target_compile_definitions(tst_export_roundtrip PRIVATE QUANTLENS_HAS_HDF5)
    endif()
    add_dependencies(tst_export_roundtrip quantlens-cli)
    set_tests_properties(tst_export_roundtrip PROPERTIES TIMEOUT 600)
endif()
