#pragma once
// The stand-in's own reading of the CANN C ABI, written apart from
// backends/ascend/acl_abi.h on purpose: a wrong value in either one makes the tests fail.
#include <cstddef>
#include <cstdint>

#define QL_STANDIN_EXPORT extern "C" __attribute__((visibility("default")))

struct aclTensor;
struct aclOpExecutor;

namespace qlstandin {

// aclDataType (RT acl_base_rt.h l.140-169)
enum DataType : int {
    DtFloat = 0,
    DtFloat16 = 1,
    DtInt8 = 2,
    DtInt32 = 3,
    DtUInt8 = 4,
    DtInt64 = 9,
    DtInt4 = 29,
};
constexpr int FormatNd = 2;           // aclFormat ACL_FORMAT_ND
constexpr int MemcpyHostToDevice = 1; // aclrtMemcpyKind
constexpr int MemcpyDeviceToHost = 2;

// Error codes the stand-in returns (RT / OB documentation values).
constexpr int ErrInvalidParam = 100000;   // ACL_ERROR_INVALID_PARAM
constexpr int ErrRepeatInit = 100002;     // ACL_ERROR_REPEAT_INITIALIZE
constexpr int ErrBadAllocation = 207001;  // ACL_ERROR_RT_MEMORY_ALLOCATION
constexpr int ErrKernel = 507015;         // an AI Core trap (GroupQuant's bad group index)
constexpr int ErrNnParamNull = 161001;    // ACLNN_ERR_PARAM_NULLPTR
constexpr int ErrNnParamInvalid = 161002; // ACLNN_ERR_PARAM_INVALID

} // namespace qlstandin
