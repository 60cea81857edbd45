# The ascend backend's suite and its CPU stand-in for CANN. The stand-in is three shared
# libraries with CANN's names, built into the build tree only (never installed, never on the
# loader path); the test points QUANTLENS_ASCEND_LIB_DIR at them.
set(_standin_src ${CMAKE_CURRENT_SOURCE_DIR}/ascend_standin)
set(_standin_full ${CMAKE_CURRENT_BINARY_DIR}/ascend_standin/full)
set(_standin_partial ${CMAKE_CURRENT_BINARY_DIR}/ascend_standin/partial)

function(ql_standin_library target output dir)
    add_library(${target} SHARED ${ARGN})
    # $<1:...> keeps multi-config generators from appending a per-configuration folder.
    set_target_properties(${target} PROPERTIES
        OUTPUT_NAME ${output}
        LIBRARY_OUTPUT_DIRECTORY $<1:${dir}>
        BUILD_RPATH "$ORIGIN"
        CXX_VISIBILITY_PRESET hidden)
    # The spec's arithmetic step by step: no FMA contraction, as in the reference.
    target_compile_options(${target} PRIVATE -ffp-contract=off)
endfunction()

ql_standin_library(ql_standin_ascendcl ascendcl ${_standin_full} ${_standin_src}/acl_runtime.cpp)
ql_standin_library(ql_standin_nnopbase nnopbase ${_standin_full} ${_standin_src}/nnopbase.cpp)
target_link_libraries(ql_standin_nnopbase PRIVATE ql_standin_ascendcl)
ql_standin_library(ql_standin_opapi opapi ${_standin_full} ${_standin_src}/opapi.cpp ${_standin_src}/group_quant.cpp)
target_link_libraries(ql_standin_opapi PRIVATE ql_standin_ascendcl)

# "partial": libopapi_nn.so (preferred over libopapi.so) without aclnnGroupQuant.
ql_standin_library(ql_standin_opapi_partial opapi_nn ${_standin_partial} ${_standin_src}/opapi.cpp)
target_link_libraries(ql_standin_opapi_partial PRIVATE ql_standin_ascendcl)
add_custom_command(TARGET ql_standin_opapi_partial POST_BUILD
    COMMAND ${CMAKE_COMMAND} -E create_symlink ${_standin_full}/libascendcl.so ${_standin_partial}/libascendcl.so
    COMMAND ${CMAKE_COMMAND} -E create_symlink ${_standin_full}/libnnopbase.so ${_standin_partial}/libnnopbase.so
    VERBATIM)
add_dependencies(ql_standin_opapi_partial ql_standin_nnopbase)

add_executable(ql_ascend_probe ${_standin_src}/probe.cpp)
target_link_libraries(ql_ascend_probe PRIVATE quantlens_backends)

ql_add_test(tst_ascend_backend LIBS quantlens_backends)
add_dependencies(tst_ascend_backend ql_standin_opapi ql_standin_opapi_partial ql_ascend_probe)
target_compile_definitions(tst_ascend_backend PRIVATE
    QL_STANDIN_DIR="${_standin_full}"
    QL_STANDIN_PARTIAL_DIR="${_standin_partial}"
    QL_ASCEND_PROBE="$<TARGET_FILE:ql_ascend_probe>")
target_link_libraries(tst_ascend_backend PRIVATE ${CMAKE_DL_LIBS})
set_property(TEST tst_ascend_backend APPEND PROPERTY ENVIRONMENT
    "QUANTLENS_ASCEND_LIB_DIR=${_standin_full}"
    "QUANTLENS_ASCEND_ALLOW_STANDIN=1")
