# One escaping rule for what files name (printable), names written so their readers read
# them back (llama-quantize rules, YAML, llm-compressor targets), and the CLI's outputs checked
# with those readers.
ql_add_test(tst_printable)
if(TARGET quantlens-cli)
    ql_add_test(tst_crafted_names)
    target_compile_definitions(tst_crafted_names PRIVATE QUANTLENS_CLI="$<TARGET_FILE:quantlens-cli>")
    add_dependencies(tst_crafted_names quantlens-cli)
endif()
