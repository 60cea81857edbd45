# Reports: a run's figures with its timings (TensorReport), read back, tabled and checked against
# rules. Above analysis and the backend contract, which know nothing of it.
target_sources(quantlens_core PRIVATE
    report/report.cpp
    report/per_channel_report.cpp
    report/report_read.cpp
    report/check.cpp
    report/model_table.cpp
    report/model_summary.cpp)
