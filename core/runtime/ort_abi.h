#pragma once
// The slice of the ONNX Runtime C ABI (Linux x86-64) QuantLens calls, declared from
// onnxruntime_c_api.h (1.30) so that no onnxruntime header or library is needed to build. OrtApi is read
// only as an array of function pointers: slot i is the pointer at byte offset 8*i (spec §2). Nothing
// outside core/runtime includes this file.
#include <cstddef>
#include <cstdint>

extern "C" {

// NOLINTBEGIN(modernize-use-using,modernize-redundant-void-arg): onnxruntime_c_api.h's declarations,
// spelled as that C header spells them.
typedef struct OrtApi OrtApi; // opaque: a table of function pointers (spec §1)
typedef struct OrtStatus OrtStatus;
typedef struct OrtEnv OrtEnv;
typedef struct OrtSessionOptions OrtSessionOptions;
typedef struct OrtSession OrtSession;
typedef struct OrtRunOptions OrtRunOptions;
typedef struct OrtValue OrtValue;
typedef struct OrtMemoryInfo OrtMemoryInfo;
typedef struct OrtTypeInfo OrtTypeInfo;
typedef struct OrtTensorTypeAndShapeInfo OrtTensorTypeAndShapeInfo;
typedef struct OrtAllocator OrtAllocator;

typedef struct OrtApiBase { // 16 bytes (spec §5)
    const OrtApi* (*GetApi)(std::uint32_t version);
    const char* (*GetVersionString)(void);
} OrtApiBase;

typedef const OrtApiBase* (*OrtGetApiBaseFn)(void);
// NOLINTEND(modernize-use-using,modernize-redundant-void-arg)

} // extern "C"

namespace ql::ort {

// The API version requested: every slot below is in version 5 (slots 0-101 are version 1,
// AddSessionConfigEntry is 5; spec §1). GetApi(v) returns one table for 1 <= v <= the library's own.
inline constexpr std::uint32_t kApiVersion = 5;

// Enums are 4-byte ints (spec §2, §4).
using ErrorCode = std::int32_t;
using ElementType = std::int32_t; // ONNXTensorElementDataType = onnx TensorProto.DataType
using OnnxType = std::int32_t;

inline constexpr ElementType kFloat = 1, kUInt8 = 2, kInt8 = 3, kUInt16 = 4, kInt16 = 5, kInt32 = 6,
                             kInt64 = 7, kBool = 9, kFloat16 = 10, kDouble = 11;
inline constexpr OnnxType kTypeTensor = 1;
inline constexpr std::int32_t kDisableAll = 0;        // GraphOptimizationLevel ORT_DISABLE_ALL
inline constexpr std::int32_t kArenaAllocator = 1;    // OrtAllocatorType
inline constexpr std::int32_t kMemTypeDefault = 0;    // OrtMemType
inline constexpr std::int32_t kLoggingLevelError = 3; // OrtLoggingLevel ORT_LOGGING_LEVEL_ERROR

// Slot numbers (spec §3) and their prototypes.
enum Slot : std::size_t {
    kGetErrorCode = 1,
    kGetErrorMessage = 2,
    kCreateEnv = 3,
    kCreateSessionFromArray = 8,
    kRun = 9,
    kCreateSessionOptions = 10,
    kSetSessionGraphOptimizationLevel = 23,
    kSetIntraOpNumThreads = 24,
    kSessionGetInputCount = 30,
    kSessionGetOutputCount = 31,
    kSessionGetInputTypeInfo = 33,
    kSessionGetOutputTypeInfo = 34,
    kSessionGetInputName = 36,
    kSessionGetOutputName = 37,
    kCreateTensorWithDataAsOrtValue = 49,
    kGetTensorMutableData = 51,
    kCastTypeInfoToTensorInfo = 55,
    kGetOnnxTypeFromTypeInfo = 56,
    kGetTensorElementType = 60,
    kGetDimensionsCount = 61,
    kGetDimensions = 62,
    kGetSymbolicDimensions = 63,
    kGetTensorTypeAndShape = 65,
    kGetValueType = 67,
    kCreateCpuMemoryInfo = 69,
    kAllocatorFree = 76,
    kGetAllocatorWithDefaultOptions = 78,
    kReleaseEnv = 92,
    kReleaseStatus = 93,
    kReleaseMemoryInfo = 94,
    kReleaseSession = 95,
    kReleaseValue = 96,
    kReleaseTypeInfo = 98,
    kReleaseTensorTypeAndShapeInfo = 99,
    kReleaseSessionOptions = 100,
    kAddSessionConfigEntry = 130,
};

using GetErrorCodeFn = ErrorCode (*)(const OrtStatus*);
using GetErrorMessageFn = const char* (*)(const OrtStatus*);
using CreateEnvFn = OrtStatus* (*)(std::int32_t level, const char* logid, OrtEnv** out);
using CreateSessionFromArrayFn = OrtStatus* (*)(const OrtEnv*, const void* data, std::size_t length,
                                                const OrtSessionOptions*, OrtSession** out);
using RunFn = OrtStatus* (*)(OrtSession*, const OrtRunOptions*, const char* const* inputNames,
                             const OrtValue* const* inputs, std::size_t inputCount,
                             const char* const* outputNames, std::size_t outputCount, OrtValue** outputs);
using CreateSessionOptionsFn = OrtStatus* (*)(OrtSessionOptions** out);
using SetGraphOptimizationLevelFn = OrtStatus* (*)(OrtSessionOptions*, std::int32_t level);
using SetIntraOpNumThreadsFn = OrtStatus* (*)(OrtSessionOptions*, int threads);
using SessionGetCountFn = OrtStatus* (*)(const OrtSession*, std::size_t* out);
using SessionGetTypeInfoFn = OrtStatus* (*)(const OrtSession*, std::size_t index, OrtTypeInfo** out);
using SessionGetNameFn = OrtStatus* (*)(const OrtSession*, std::size_t index, OrtAllocator*, char** out);
using CreateTensorWithDataFn = OrtStatus* (*)(const OrtMemoryInfo*, void* data, std::size_t bytes,
                                              const std::int64_t* shape, std::size_t rank, ElementType type,
                                              OrtValue** out);
using GetTensorMutableDataFn = OrtStatus* (*)(OrtValue*, void** out);
using CastTypeInfoToTensorInfoFn = OrtStatus* (*)(const OrtTypeInfo*, const OrtTensorTypeAndShapeInfo** out);
using GetOnnxTypeFromTypeInfoFn = OrtStatus* (*)(const OrtTypeInfo*, OnnxType* out);
using GetTensorElementTypeFn = OrtStatus* (*)(const OrtTensorTypeAndShapeInfo*, ElementType* out);
using GetDimensionsCountFn = OrtStatus* (*)(const OrtTensorTypeAndShapeInfo*, std::size_t* out);
using GetDimensionsFn = OrtStatus* (*)(const OrtTensorTypeAndShapeInfo*, std::int64_t* dims, std::size_t n);
using GetSymbolicDimensionsFn = OrtStatus* (*)(const OrtTensorTypeAndShapeInfo*, const char** names,
                                               std::size_t n);
using GetTensorTypeAndShapeFn = OrtStatus* (*)(const OrtValue*, OrtTensorTypeAndShapeInfo** out);
using GetValueTypeFn = OrtStatus* (*)(const OrtValue*, OnnxType* out);
using CreateCpuMemoryInfoFn = OrtStatus* (*)(std::int32_t allocatorType, std::int32_t memType,
                                             OrtMemoryInfo** out);
using AllocatorFreeFn = OrtStatus* (*)(OrtAllocator*, void* p);
using GetAllocatorWithDefaultOptionsFn = OrtStatus* (*)(OrtAllocator** out);
using AddSessionConfigEntryFn = OrtStatus* (*)(OrtSessionOptions*, const char* key, const char* value);
template <class T> using ReleaseFn = void (*)(T*);

} // namespace ql::ort
