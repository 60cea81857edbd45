# Fan-out (shards, resume, merge): the CLI process end to end, and a real one-node Slurm cluster
# started by the suite itself where slurm-wlm and munge are installed (skipped, with the reason,
# where they are not).
if(TARGET quantlens-cli)
    ql_add_test(tst_shard)
    target_compile_definitions(tst_shard PRIVATE QUANTLENS_CLI="$<TARGET_FILE:quantlens-cli>")
    add_dependencies(tst_shard quantlens-cli)
    set_tests_properties(tst_shard PROPERTIES TIMEOUT 600)
    add_test(NAME slurm_fanout
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/slurm_fanout.sh $<TARGET_FILE:quantlens-cli>
                     ${PROJECT_SOURCE_DIR})
    set_tests_properties(slurm_fanout PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900 RUN_SERIAL TRUE)
endif()
# The Slurm scripts with hostile arguments (numbers that are not numbers, command substitutions in any
# argument), against recording stand-ins for sbatch and quantlens-cli: runs everywhere.
add_test(NAME slurm_hostile_args
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/slurm_hostile_args.sh ${PROJECT_SOURCE_DIR})
