# Runs the fuzzer for SECONDS on a scratch corpus (new inputs go to WORK, never into the source tree).
# Inputs up to 300 KB: deep nesting and long names need room.
if(NOT EXISTS ${FUZZER})
    message("fuzz_safetensors was not built (needs clang with libFuzzer): skipped")
    cmake_language(EXIT 77)
endif()
file(MAKE_DIRECTORY ${WORK}/corpus ${WORK}/artifacts)
execute_process(
    COMMAND ${FUZZER} -max_total_time=${SECONDS} -max_len=300000 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1
            -artifact_prefix=${WORK}/artifacts/ ${WORK}/corpus ${SEEDS}
    RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "fuzz_safetensors found a failing input (exit ${rc}); see ${WORK}/artifacts")
endif()
