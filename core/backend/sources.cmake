target_sources(quantlens_core PRIVATE
    backend/backend_task.cpp
    backend/timing.cpp
    backend/registry.cpp)
