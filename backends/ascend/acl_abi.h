#pragma once
// The slice of the CANN C ABI QuantLens calls, declared here so that no CANN header or library is
// needed to build (CANN's acl/acl.h, acl/acl_base.h and aclnn headers). Every value below is copied from
// those headers; nothing else in QuantLens may include this file except backends/ascend and the test
// stand-in.
#include <cstddef>
#include <cstdint>

extern "C" {

using aclError = int;             // RT: ACL_SUCCESS = 0
using aclnnStatus = std::int32_t; // OB: 0 = success
using aclrtStream = void*;
struct aclTensor;     // opaque (OB)
struct aclOpExecutor; // opaque (OB)
using aclDataType = int;
using aclFormat = int;
using aclrtMemcpyKind = int;
using aclrtMemMallocPolicy = int;

} // extern "C"

namespace ql::acl {

inline constexpr aclError kSuccess = 0;
inline constexpr aclError kRepeatInitialize = 100002; // ACL_ERROR_REPEAT_INITIALIZE

// aclDataType (RT acl_base_rt.h l.140-169).
inline constexpr aclDataType kFloat = 0;
inline constexpr aclDataType kInt8 = 2;
inline constexpr aclDataType kInt32 = 3;
inline constexpr aclDataType kUInt8 = 4;
inline constexpr aclDataType kInt64 = 9;
inline constexpr aclDataType kInt4 = 29;

inline constexpr aclFormat kFormatNd = 2; // ACL_FORMAT_ND: the format every quant op takes

inline constexpr aclrtMemcpyKind kHostToDevice = 1;
inline constexpr aclrtMemcpyKind kDeviceToHost = 2;

inline constexpr aclrtMemMallocPolicy kMallocHugeFirst = 0; // what the CANN samples use

// Function pointer types, one per prototype QuantLens calls.
using InitFn = aclError (*)(const char* configPath);
using FinalizeFn = aclError (*)();
using SetDeviceFn = aclError (*)(std::int32_t deviceId);
using ResetDeviceFn = aclError (*)(std::int32_t deviceId);
using GetDeviceCountFn = aclError (*)(std::uint32_t* count); // optional: not every probe needs it
using GetSocNameFn = const char* (*)();                      // optional: names the chip
using CreateStreamFn = aclError (*)(aclrtStream* stream);
using DestroyStreamFn = aclError (*)(aclrtStream stream);
using SynchronizeStreamFn = aclError (*)(aclrtStream stream);
using MallocFn = aclError (*)(void** devPtr, std::size_t size, aclrtMemMallocPolicy policy);
using FreeFn = aclError (*)(void* devPtr);
using MemcpyFn = aclError (*)(void* dst, std::size_t destMax, const void* src, std::size_t count,
                              aclrtMemcpyKind kind);

using CreateTensorFn = aclTensor* (*)(const std::int64_t* viewDims, std::uint64_t viewDimsNum,
                                      aclDataType dataType, const std::int64_t* stride, std::int64_t offset,
                                      aclFormat format, const std::int64_t* storageDims,
                                      std::uint64_t storageDimsNum, void* tensorData);
using DestroyTensorFn = aclnnStatus (*)(const aclTensor* tensor);

using QuantizeWsFn = aclnnStatus (*)(const aclTensor* x, const aclTensor* scales, const aclTensor* zeroPoints,
                                     aclDataType dtype, std::int32_t axis, aclTensor* out,
                                     std::uint64_t* workspaceSize, aclOpExecutor** executor);
using AscendQuantV3WsFn = aclnnStatus (*)(const aclTensor* x, const aclTensor* scale, const aclTensor* offset,
                                          bool sqrtMode, const char* roundMode, std::int32_t dstType,
                                          std::int32_t axis, const aclTensor* y, std::uint64_t* workspaceSize,
                                          aclOpExecutor** executor);
using GroupQuantWsFn = aclnnStatus (*)(const aclTensor* x, const aclTensor* scale,
                                       const aclTensor* groupIndex, const aclTensor* offsetOptional,
                                       std::int32_t dstType, aclTensor* y, std::uint64_t* workspaceSize,
                                       aclOpExecutor** executor);
// The second phase has the same signature for every aclnn op (spec: OP uses one typedef).
using RunOpFn = aclnnStatus (*)(void* workspace, std::uint64_t workspaceSize, aclOpExecutor* executor,
                                aclrtStream stream);

} // namespace ql::acl
