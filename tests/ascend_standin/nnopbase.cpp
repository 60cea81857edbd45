// Stand-in libnnopbase.so: aclCreateTensor / aclDestroyTensor, with the checks the real one
// leaves to the kernels (pointer in device memory, view inside the storage).
#include "standin_state.h"
#include "standin_tensor.h"

using namespace qlstandin;

QL_STANDIN_EXPORT aclTensor* aclCreateTensor(const std::int64_t* viewDims, std::uint64_t viewDimsNum,
                                             int dataType, const std::int64_t* stride, std::int64_t offset,
                                             int format, const std::int64_t* storageDims,
                                             std::uint64_t storageDimsNum, void* tensorData) {
    const bool device = isDeviceRange(tensorData, 1);
    const std::string details =
        "dims=" + formatDims(viewDims, viewDimsNum) + " dtype=" + std::to_string(dataType) +
        " strides=" + formatDims(stride, viewDimsNum) + " offset=" + std::to_string(offset) +
        " format=" + std::to_string(format) + " storage=" + formatDims(storageDims, storageDimsNum) +
        " data=" + (device ? "device" : "host");
    if (enter("aclCreateTensor", details)) return nullptr;
    if ((viewDimsNum && (!viewDims || !stride)) || (storageDimsNum && !storageDims) || viewDimsNum > 8) {
        refuse(ErrNnParamNull, "aclCreateTensor: missing dims or strides");
        return nullptr;
    }
    auto* t = new aclTensor;
    t->dims.assign(viewDims, viewDims + viewDimsNum);
    t->strides.assign(stride, stride + viewDimsNum);
    t->storage.assign(storageDims, storageDims + storageDimsNum);
    t->offset = offset;
    t->dtype = dataType;
    t->format = format;
    t->data = tensorData;
    // The furthest element the view reaches must lie inside the storage and the allocation.
    std::int64_t last = offset;
    for (std::uint64_t d = 0; d < viewDimsNum; ++d) {
        if (viewDims[d] < 0 || stride[d] < 0)
            last = -1;
        else if (viewDims[d] > 0)
            last += (viewDims[d] - 1) * stride[d];
    }
    const std::size_t storage = storageBytes(dataType, count(t->storage));
    if (!device || last < 0 || storage == 0 || storageBytes(dataType, last + 1) > storage ||
        !isDeviceRange(tensorData, storage)) {
        refuse(ErrNnParamInvalid,
               "aclCreateTensor: view outside its storage or data not in device memory: " + details);
        delete t;
        return nullptr;
    }
    std::lock_guard lock(state().mutex);
    ++state().liveTensors;
    return t;
}

QL_STANDIN_EXPORT int aclDestroyTensor(const aclTensor* tensor) {
    if (int e = enter("aclDestroyTensor")) return e;
    if (!tensor || tensor->magic != aclTensor::kMagic)
        return refuse(ErrNnParamInvalid, "aclDestroyTensor: not a tensor");
    const_cast<aclTensor*>(tensor)->magic = 0;
    delete tensor;
    std::lock_guard lock(state().mutex);
    --state().liveTensors;
    return 0;
}

QL_STANDIN_EXPORT int aclnnInit(const char*) {
    return enter("aclnnInit");
}
QL_STANDIN_EXPORT int aclnnFinalize() {
    return enter("aclnnFinalize");
}
