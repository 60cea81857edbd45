#pragma once
// TensorSource: an inventory of a model file's tensors, loaded lazily one at a time.
#include "quant/weight_role.h"
#include "tensor/tensor.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ql {

struct TensorInfo {
    std::string name;
    DType dtype = DType::F32;
    Shape shape;
    std::uint64_t byteSize = 0;
    std::string location; // file (shard) and offset or dataset path, for display
    /// The type the file stores where it is not `dtype` itself, which is what loading decodes to
    /// (GGUF's "Q4_K", read as f32); empty when the file stores `dtype`.
    std::string storedType = {};
};

/// Something the file holds that the source leaves out of its tensor list, and why ("unsupported
/// type: string", "its chunks were never written").
struct UnlistedEntry {
    std::string name;
    std::string reason;
};

/// Whole-model runs quantize these: floating tensors of rank 1 or more with elements. Integer
/// buffers (position ids, masks) and scalar constants are not weights.
bool isWeightTensor(const TensorInfo& info);

/// One thing a file says about its model (GGUF's general.architecture, ONNX's opset), for display.
struct ModelInfoEntry {
    std::string key;
    std::string value;
};

/// `key` and `value` as a file gave them, made safe to show: escaped (io/printable.h) and each cut
/// to at most 240 bytes, a cut value ending in "…".
ModelInfoEntry modelInfoEntry(std::string_view key, std::string_view value);

struct StoredQuantization;
struct QdqWeight;
struct LlamaRows;

class TensorSource {
public:
    virtual ~TensorSource() = default;
    /// The path the user opened (a file, or a sharded index).
    virtual const std::string& path() const = 0;
    /// Every file the source reads (a sharded checkpoint: the index and each shard), so that no
    /// output is ever written over one of them.
    virtual std::vector<std::string> files() const { return {path()}; }
    /// Every tensor, in file order. Listing reads headers only.
    virtual const std::vector<TensorInfo>& tensors() const = 0;
    /// What the file holds that tensors() leaves out, with why (so "0 tensors" is never all a user
    /// learns about a file); empty where the format lists everything it can hold.
    virtual const std::vector<UnlistedEntry>& unlisted() const;
    /// Loads one tensor; safetensors tensors borrow the memory mapping (no copy).
    /// Throws FileError naming the file, the tensor and the reason.
    virtual Tensor load(const std::string& name) const = 0;
    /// Rows [begin, begin+count) along axis 0 of one tensor.
    virtual Tensor loadRows(const std::string& name, std::int64_t begin, std::int64_t count) const = 0;

    /// Gives back the memory a loaded tensor's bytes hold in this process, where the source can (a
    /// mapping's pages); tensors loaded earlier stay valid. A run over a model calls it after each
    /// tensor, so its memory follows the largest tensor, not the model.
    virtual void release(const std::string& name) const { (void)name; }

    /// What the file says about the model (GGUF key/values, ONNX opset and producer, safetensors'
    /// __metadata__), in a fixed order, each entry made by modelInfoEntry; empty where it says nothing.
    virtual std::vector<ModelInfoEntry> modelInfo() const { return {}; }

    /// How the model's graph uses a listed tensor, where the file records it (ONNX: the first node
    /// consuming it, with the attributes that decide its layout); nullopt elsewhere. Feeds weightRole.
    virtual std::optional<WeightUse> weightUse(const std::string& name) const {
        (void)name;
        return std::nullopt;
    }

    /// The tensor's codes as the file stores them (storedQuantization() in io/stored_quantization.h
    /// asks for a listed name): GGUF's simple block types, ONNX QDQ weights; by default a
    /// compressed-tensors export's packed codes. nullopt when `name` is not stored quantized, or its
    /// codes cannot be exposed (then `why`, when given, says so).
    virtual std::optional<StoredQuantization> storedCodes(const std::string& name, std::string* why) const;

    /// The ONNX QDQ weight whose DequantizeLinear output `name` is; nullptr in other formats.
    virtual const QdqWeight* qdq(const std::string& name) const;

    /// How a converter reordered the `rows` rows of `name`, where the file records it: llama.cpp's q
    /// and k of a llama-family GGUF (io/llama_rows.h). nullopt where the format keeps rows as they were.
    virtual std::optional<LlamaRows> convertedRows(const std::string& name, std::int64_t rows) const;

    /// A text the file attaches to one of its objects: `object` empty for the file itself
    /// (safetensors' __metadata__ entries, an HDF5 file's root attributes), else an HDF5 group or
    /// dataset path. nullopt when absent or not text. QuantLens exports describe their tensors so.
    virtual std::optional<std::string> textAttribute(const std::string& object, const std::string& key) const;

    /// nullptr when absent. Hashed (a model run looks up every tensor it lists): the index is built
    /// on the first call, so tensors() and unlisted() must not change after it.
    const TensorInfo* find(const std::string& name) const;
    /// Why a name the file holds is not listed; nullptr when it is listed, or not in the file.
    const UnlistedEntry* findUnlisted(const std::string& name) const;

private:
    void buildIndex() const;
    // Names → places in tensors() / unlisted(), viewing the names those lists hold (not copies).
    mutable std::once_flag m_indexed;
    mutable std::unordered_map<std::string_view, std::size_t> m_byName, m_unlistedByName;
};

/// A tensor named on a command line or in a form as FILE:TENSOR.
struct TensorRef {
    std::string file;
    std::string tensor;
};
/// Splits at the last colon (so a path may hold colons); nullopt when either side is empty.
std::optional<TensorRef> parseTensorRef(const std::string& text);
/// The tensor's values as f32. Throws FileError naming the file and tensor when either is missing;
/// `role` says what the tensor was named for ("--scale", "scales").
std::vector<float> loadTensorValues(const TensorRef& ref, const std::string& role);
/// The same from a source already open.
std::vector<float> loadTensorValues(const TensorSource& source, const std::string& tensor,
                                    const std::string& role);

/// Opens by content and extension: .safetensors, .safetensors.index.json (sharded), .h5/.hdf5/.keras,
/// .gguf, .onnx.
/// Throws FileError with the path and the reason.
std::unique_ptr<TensorSource> openTensorSource(const std::string& path);

} // namespace ql
