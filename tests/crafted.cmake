# Crafted files and names: NaN/Inf in diffs and their gates, plan files that
# list a tensor twice or lack their arguments, floats where integers are meant, and plan runs that
# leave no output when they fail.
if(TARGET quantlens-cli)
    ql_add_test(tst_crafted_inputs)
    target_compile_definitions(tst_crafted_inputs PRIVATE QUANTLENS_CLI="$<TARGET_FILE:quantlens-cli>")
    add_dependencies(tst_crafted_inputs quantlens-cli)
endif()
