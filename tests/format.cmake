# The house's formatting: every tracked C++ file as .clang-format says (skipped, with the reason,
# where clang-format or git is missing, as in a source tarball).
find_program(QUANTLENS_GIT git)
if(QUANTLENS_GIT AND EXISTS ${PROJECT_SOURCE_DIR}/.git)
    add_test(NAME format COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/check-format.sh)
    set_tests_properties(format PROPERTIES SKIP_RETURN_CODE 77)
endif()
