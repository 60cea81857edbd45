target_sources(quantlens_core PRIVATE
    job/diff_job.cpp
    job/diff_run.cpp
    job/explicit_params.cpp
    job/importance.cpp
    job/model_job.cpp
    job/plan_job.cpp
    job/plan_names.cpp
    job/plan_output.cpp
    job/plan_solver.cpp
    job/report_journal.cpp
    job/report_parts.cpp
    job/shard.cpp
    job/spec_options.cpp
    job/suggest.cpp
    job/sweep_job.cpp
    job/tensor_job.cpp
    job/tensor_run.cpp)
