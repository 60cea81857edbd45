# ONNX Runtime loaded at run time: the loader builds everywhere; the model rewrite and the
# evaluation need the ONNX protobuf classes, and say so in a build without them.
target_sources(quantlens_core PRIVATE runtime/activation_stats.cpp runtime/input_file.cpp
    runtime/ort_runtime.cpp)
target_link_libraries(quantlens_core PRIVATE ${CMAKE_DL_LIBS})
if(QUANTLENS_ONNX)
    target_sources(quantlens_core PRIVATE runtime/evaluate_job.cpp runtime/model_rewrite.cpp
        runtime/output_objective.cpp)
else()
    target_sources(quantlens_core PRIVATE runtime/evaluate_unavailable.cpp)
endif()
