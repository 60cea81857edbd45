# The cuda backend. tst_cuda_element (the per-element arithmetic), tst_cuda_walk (the
# kernel body and its scale mapping) and tst_cuda_statistics (the statistics passes) run the device
# code on the host, so they are built on every machine, CUDA or not; tst_cuda_backend needs the
# backend itself and skips its device rows (with the reason) where no GPU is present.
foreach(suite tst_cuda_element tst_cuda_walk tst_cuda_statistics)
    ql_add_test(${suite})
    target_include_directories(${suite} PRIVATE ${PROJECT_SOURCE_DIR}/backends)
    # The oracle's arithmetic: one IEEE operation at a time, as the kernels are built (-fmad=false).
    target_compile_options(${suite} PRIVATE -ffp-contract=off)
endforeach()

if(QUANTLENS_CUDA)
    ql_add_test(tst_cuda_backend LIBS quantlens_backends)
    # Without a GPU the device rows skip: say "skipped", not "passed".
    set_tests_properties(tst_cuda_backend PROPERTIES SKIP_REGULAR_EXPRESSION "no CUDA device: ")
endif()
