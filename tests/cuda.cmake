# The cuda backend (issue 7). tst_cuda_element runs the device code's arithmetic and kernel body on
# the host, so it is built on every machine, CUDA or not; tst_cuda_backend needs the backend itself
# and skips its device rows (with the reason) where no GPU is present.
ql_add_test(tst_cuda_element)
target_include_directories(tst_cuda_element PRIVATE ${PROJECT_SOURCE_DIR}/backends)
# The oracle's arithmetic: one IEEE operation at a time, as the kernels are built (-fmad=false).
target_compile_options(tst_cuda_element PRIVATE -ffp-contract=off)

if(QUANTLENS_CUDA)
    ql_add_test(tst_cuda_backend LIBS quantlens_backends)
endif()
