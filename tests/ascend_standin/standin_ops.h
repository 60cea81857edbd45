#pragma once
// What the stand-in's ops share: argument checks, the executor and the common second phase.
#include "standin_state.h"
#include "standin_view.h"

#include <memory>
#include <optional>

namespace qlstandin {

inline bool valid(const aclTensor* t) {
    return t && t->magic == aclTensor::kMagic;
}

// Every input's data must still be device memory when the kernel runs.
inline bool live(const View& v) {
    return isDeviceRange(v.data, v.storage);
}

inline int normalizeAxis(std::int32_t axis, int rank, int* out) {
    if (axis < -rank || axis >= rank) return 0;
    *out = axis < 0 ? axis + rank : axis;
    return 1;
}

inline std::string yesNo(const void* p) {
    return p ? "yes" : "no";
}

inline int finishFirstPhase(const std::string& op, std::function<int()> work, std::uint64_t* workspaceSize,
                            aclOpExecutor** executor) {
    auto* ex = new aclOpExecutor;
    ex->op = op;
    ex->workspaceSize = state().workspaceSize;
    ex->work = std::move(work);
    std::lock_guard lock(state().mutex);
    ++state().liveExecutors;
    state().pendingExecutors.insert(ex);
    *workspaceSize = ex->workspaceSize;
    *executor = ex;
    return 0;
}

// The second phase, identical for every op (spec ascend_abi: one typedef for all of them).
inline int launch(const std::string& op, void* workspace, std::uint64_t size, aclOpExecutor* ex,
                  void* stream) {
    if (int e = enter(op, "workspace=" + std::to_string(size))) return e;
    if (!ex || ex->magic != aclOpExecutor::kMagic || ex->op != op)
        return refuse(ErrNnParamInvalid, op + ": not an executor from " + op + "GetWorkspaceSize");
    std::unique_ptr<aclOpExecutor> consumed(ex); // the launch consumes the executor, even on error
    consumed->magic = 0;
    {
        std::lock_guard lock(state().mutex);
        --state().liveExecutors;
        state().pendingExecutors.erase(consumed.get());
    }
    if (size != consumed->workspaceSize)
        return refuse(ErrNnParamInvalid, op + ": workspace size " + std::to_string(size) + " but " +
                                             std::to_string(consumed->workspaceSize) + " was asked for");
    if (size > 0 && !isDeviceRange(workspace, size))
        return refuse(ErrNnParamInvalid, op + ": workspace is not device memory of the asked size");
    std::lock_guard lock(state().mutex);
    auto it = state().streams.find(stream);
    if (it == state().streams.end()) return refuse(ErrNnParamInvalid, op + ": unknown stream");
    it->second.push_back(std::move(consumed->work));
    return 0;
}

inline bool allNd(std::initializer_list<const aclTensor*> ts) {
    for (auto* t : ts)
        if (t && t->format != FormatNd) return false;
    return true;
}

} // namespace qlstandin
