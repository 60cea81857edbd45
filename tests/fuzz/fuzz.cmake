# fuzz_safetensors: built by clang (when found) as its own small project, run for a few seconds
# as a ctest. Without clang/libFuzzer the test reports itself skipped.
find_program(QUANTLENS_CLANGXX NAMES clang++ clang++-18 clang++-17 clang++-16 clang++-15 clang++-14)
set(_fuzz_bin ${CMAKE_CURRENT_BINARY_DIR}/fuzz)
if(QUANTLENS_CLANGXX)
    include(ExternalProject)
    ExternalProject_Add(fuzz_safetensors_build
        SOURCE_DIR ${CMAKE_CURRENT_SOURCE_DIR}/fuzz
        BINARY_DIR ${_fuzz_bin}
        CMAKE_ARGS -DCMAKE_CXX_COMPILER=${QUANTLENS_CLANGXX} -DCMAKE_BUILD_TYPE=RelWithDebInfo
                   -DQUANTLENS_CORE_DIR=${PROJECT_SOURCE_DIR}/core
                   -Dnlohmann_json_DIR=${nlohmann_json_DIR}
        INSTALL_COMMAND ""
        BUILD_ALWAYS ON)
endif()
add_test(NAME fuzz_safetensors
    COMMAND ${CMAKE_COMMAND} -DFUZZER=${_fuzz_bin}/fuzz_safetensors -DWORK=${_fuzz_bin}/work
            -DSEEDS=${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus -DSECONDS=8
            -P ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/run_fuzz.cmake)
set_tests_properties(fuzz_safetensors PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
