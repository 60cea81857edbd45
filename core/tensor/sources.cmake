target_sources(quantlens_core PRIVATE
    tensor/cpu_isa.cpp
    tensor/dtype.cpp
    tensor/float_formats.cpp
    tensor/mapped_memory.cpp
    tensor/shape.cpp
    tensor/tensor.cpp)
