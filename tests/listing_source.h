#pragma once
// A TensorSource that only lists its tensors: for the browser and item-model suites, which never load.
#include "io/tensor_source.h"

#include <string>
#include <utility>
#include <vector>

namespace qltest {

class ListingSource : public ql::TensorSource {
public:
    explicit ListingSource(std::vector<ql::TensorInfo> t)
        : m_tensors(std::move(t)) {}
    const std::string& path() const override { return m_path; }
    const std::vector<ql::TensorInfo>& tensors() const override { return m_tensors; }
    ql::Tensor load(const std::string&) const override { return {}; }
    ql::Tensor loadRows(const std::string&, std::int64_t, std::int64_t) const override { return {}; }

private:
    std::string m_path = "listing";
    std::vector<ql::TensorInfo> m_tensors;
};

} // namespace qltest
