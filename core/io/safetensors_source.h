#pragma once
// safetensors files, single or sharded (model.safetensors.index.json), as one TensorSource.
// Opening reads the headers only; tensor bytes are borrowed from read-only memory mappings.
#include "io/mapped_file.h"
#include "io/safetensors_header.h"
#include "io/tensor_source.h"

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace ql {

class SafetensorsSource : public TensorSource {
public:
    /// One .safetensors file.
    static std::unique_ptr<SafetensorsSource> openFile(const std::string& path);
    /// A Hugging Face index: {"metadata": {...}, "weight_map": {tensor: shard file}}; shards are
    /// found next to the index. Every shard must exist and hold the tensors the map assigns it.
    static std::unique_ptr<SafetensorsSource> openIndex(const std::string& indexPath);

    const std::string& path() const override { return m_path; }
    const std::vector<TensorInfo>& tensors() const override { return m_infos; }
    /// The index (when sharded) and every shard.
    std::vector<std::string> files() const override;
    Tensor load(const std::string& name) const override;
    Tensor loadRows(const std::string& name, std::int64_t begin, std::int64_t count) const override;
    void release(const std::string& name) const override;
    /// The __metadata__ of the (first) file, or the index's "metadata" for sharded models.
    const std::map<std::string, std::string>& metadata() const { return m_metadata; }
    /// That metadata, in key order.
    std::vector<ModelInfoEntry> modelInfo() const override;
    /// The file's own (object "") __metadata__ entries.
    std::optional<std::string> textAttribute(const std::string& object,
                                             const std::string& key) const override;

private:
    struct Shard {
        std::string path;
        SafetensorsHeader header;
        std::shared_ptr<const MappedFile> mapping;
    };
    struct Where {
        std::size_t shard;
        std::size_t entry;
    };
    static Shard openShard(const std::string& path);
    void add(std::size_t shard, std::size_t entry);
    const Where& locate(const std::string& name) const;

    std::string m_path;
    std::vector<Shard> m_shards;
    std::vector<TensorInfo> m_infos;
    std::unordered_map<std::string, Where> m_where;
    std::map<std::string, std::string> m_metadata;
};

} // namespace ql
