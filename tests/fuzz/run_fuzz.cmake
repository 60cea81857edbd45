# Runs the fuzzer for SECONDS on a scratch corpus (new inputs go to WORK, never into the source tree).
# Inputs up to 300 KB: deep nesting and long names need room.
if(NOT EXISTS ${FUZZER})
    get_filename_component(_name ${FUZZER} NAME)
    message("${_name} was not built (needs clang with libFuzzer): skipped")
    cmake_language(EXIT 77)
endif()
file(MAKE_DIRECTORY ${WORK}/corpus ${WORK}/artifacts)
execute_process(
    COMMAND ${FUZZER} -max_total_time=${SECONDS} -max_len=300000 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1
            -artifact_prefix=${WORK}/artifacts/ ${WORK}/corpus ${SEEDS}
    RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    get_filename_component(_name ${FUZZER} NAME)
    message(FATAL_ERROR "${_name} found a failing input (exit ${rc}); see ${WORK}/artifacts")
endif()
