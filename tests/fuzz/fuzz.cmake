# fuzz_safetensors, fuzz_index_json: built by clang (when found) as its own small project, run for a few seconds
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
# Each target runs a few seconds on its own seeds: the safetensors header, and index JSON.
foreach(target_seeds fuzz_safetensors:corpus fuzz_index_json:corpus_index)
    string(REPLACE ":" ";" _pair ${target_seeds})
    list(GET _pair 0 _target)
    list(GET _pair 1 _seeds)
    add_test(NAME ${_target}
        COMMAND ${CMAKE_COMMAND} -DFUZZER=${_fuzz_bin}/${_target} -DWORK=${_fuzz_bin}/work-${_target}
                -DSEEDS=${CMAKE_CURRENT_SOURCE_DIR}/fuzz/${_seeds} -DSECONDS=8
                -P ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/run_fuzz.cmake)
    set_tests_properties(${_target} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)
endforeach()
