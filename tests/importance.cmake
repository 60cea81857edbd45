# Importance files: llama.cpp imatrix files (tests/data/imatrix) and safetensors statistics.
ql_add_test(tst_importance)
