target_sources(quantlens_core PRIVATE
    io/atomic_file.cpp
    io/child_process.cpp
    io/export_compressed_tensors.cpp
    io/export_reader.cpp
    io/export_safetensors.cpp
    io/export_tensors.cpp
    io/gguf_blocks.cpp
    io/gguf_source.cpp
    io/importance_file.cpp
    io/inspect_report.cpp
    io/importance_file_readers.cpp
    io/mapped_file.cpp
    io/model_formats.cpp
    io/printable.cpp
    io/safetensors_header.cpp
    io/untrusted_json.cpp
    io/llama_rows.cpp
    io/safetensors_source.cpp
    io/run_files.cpp
    io/safetensors_writer.cpp
    io/stored_quantization.cpp
    io/tensor_source.cpp)
# HDF5 code is compiled only when the option is on; the fallback explains the missing feature.
if(QUANTLENS_HDF5)
    target_sources(quantlens_core PRIVATE
        io/export_hdf5.cpp
        io/hdf5_source.cpp
        io/hdf5_util.cpp)
else()
    target_sources(quantlens_core PRIVATE io/export_hdf5_unavailable.cpp)
endif()
# ONNX likewise: Debian's libonnx protobuf classes, or a fallback that says the build lacks them.
if(QUANTLENS_ONNX)
    target_sources(quantlens_core PRIVATE io/export_onnx_qdq.cpp io/onnx_qdq.cpp io/onnx_source.cpp
                                          io/onnx_stored.cpp io/onnx_tensor.cpp io/onnx_wire.cpp)
else()
    target_sources(quantlens_core PRIVATE io/export_onnx_qdq_unavailable.cpp io/onnx_source_unavailable.cpp)
endif()
