# clang-tidy as a suite: the checks in .clang-tidy over the project's own C++ sources in this build
# (its compile_commands.json; no generated moc files), run in parallel by scripts/check-tidy.py; any
# diagnostic fails it. Skipped (77) where Debian's clang-tidy is not installed. Labelled `tidy`:
# `ctest -LE tidy` leaves it out. A file found clean is remembered (build/<preset>/tidy-cache) under a
# key made of its compile command, the content of everything it includes, .clang-tidy and
# clang-tidy's version, so a rerun checks only what a change can affect. A first run parses every
# Qt header again for each file: that is the cost of a fresh build folder (README, Contributing).
# Not in a sanitizer build: it would tidy the very same sources a second time.
if(NOT CMAKE_EXPORT_COMPILE_COMMANDS OR CMAKE_CXX_FLAGS MATCHES "-fsanitize=")
    return()
endif()
add_test(NAME tidy COMMAND ${QUANTLENS_PYTHON_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/check-tidy.py
                           ${PROJECT_BINARY_DIR})
# It takes every core: run alone, not beside other suites.
set_tests_properties(tidy PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 3600 RUN_SERIAL TRUE LABELS tidy)
