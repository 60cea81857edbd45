target_sources(quantlens_core PRIVATE
    tensor/dtype.cpp
    tensor/float_formats.cpp
    tensor/shape.cpp
    tensor/tensor.cpp)
