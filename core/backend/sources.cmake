target_sources(quantlens_core PRIVATE
    backend/job.cpp
    backend/timing.cpp
    backend/registry.cpp)
