# The base layer: errors, worker threads, instruction-set detection, memory, text helpers.
target_sources(quantlens_core PRIVATE
    base/cpu_isa.cpp
    base/mapped_memory.cpp
    base/suggest.cpp)
