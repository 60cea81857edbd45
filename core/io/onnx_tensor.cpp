#include "io/onnx_tensor.h"

#include "base/error.h"
#include "io/mapped_file.h"
#include "io/printable.h"

#include <charconv>
#include <cstring>
#include <limits>

namespace fs = std::filesystem;

namespace ql::onnxio {
namespace {

// TensorProto.DataType numbers (onnx.proto). Written out because Debian's onnx 1.12 headers predate
// the fp8 (17-20), 4-bit (21-23) and e8m0 (24) entries, which newer exporters write.
enum : int {
    kFloat = 1,
    kUint8,
    kInt8,
    kUint16,
    kInt16,
    kInt32,
    kInt64,
    kString,
    kBool,
    kFloat16,
    kDouble,
    kUint32,
    kUint64,
    kComplex64,
    kComplex128,
    kBfloat16,
    kF8E4M3FN,
    kF8E4M3FNUZ,
    kF8E5M2,
    kF8E5M2FNUZ,
    kUint4,
    kInt4,
    kF4E2M1,
    kF8E8M0,
    kUint2,
    kInt2,
    kLastKnown = kInt2
};
constexpr int kExternal = 1; // TensorProto.DataLocation.EXTERNAL

[[noreturn]] void fail(const std::string& model, const std::string& name, const std::string& reason) {
    throw FileError(model + ": " + printable(name + ": " + reason)); // names and locations from the file
}

std::uint64_t storedBytes(const ElementType& t, std::int64_t n) {
    const auto count = static_cast<std::uint64_t>(n);
    return t.packed4 ? (count + 1) / 2 : count * static_cast<std::uint64_t>(storageBytes(t.dtype));
}

// Elements of the typed field holding `t`, and the bytes they become (little-endian, as raw_data).
std::string typedBytes(const onnx::TensorProto& p, const ElementType& t, int type, std::int64_t n,
                       const std::string& model, const std::string& name) {
    const auto expectCount = [&](int have, std::uint64_t want, const char* field) {
        if (static_cast<std::uint64_t>(have) != want)
            fail(model, name,
                 std::string(field) + " holds " + std::to_string(have) + " values, the shape needs " +
                     std::to_string(want));
    };
    const auto copy = [](const auto& field) {
        std::string out(static_cast<std::size_t>(field.size()) * sizeof(field.Get(0)), '\0');
        if (!out.empty()) std::memcpy(out.data(), field.data(), out.size());
        return out;
    };
    switch (type) {
    case kFloat:
        expectCount(p.float_data_size(), static_cast<std::uint64_t>(n), "float_data");
        return copy(p.float_data());
    case kDouble:
        expectCount(p.double_data_size(), static_cast<std::uint64_t>(n), "double_data");
        return copy(p.double_data());
    case kInt64:
        expectCount(p.int64_data_size(), static_cast<std::uint64_t>(n), "int64_data");
        return copy(p.int64_data());
    case kInt32:
        expectCount(p.int32_data_size(), static_cast<std::uint64_t>(n), "int32_data");
        return copy(p.int32_data());
    default:
        break;
    }
    // Everything else narrower than 32 bits sits one element (or, for 4-bit types, one byte of two
    // elements) per int32_data entry; f16 / bf16 / fp8 as their bit patterns. Only the low bits count.
    const std::uint64_t want =
        storedBytes(t, n) / (t.packed4 ? 1 : static_cast<std::uint64_t>(storageBytes(t.dtype)));
    expectCount(p.int32_data_size(), want, "int32_data");
    const int width = t.packed4 ? 1 : storageBytes(t.dtype);
    std::string out(static_cast<std::size_t>(want) * static_cast<std::size_t>(width), '\0');
    for (int i = 0; i < p.int32_data_size(); ++i) {
        auto v = static_cast<std::uint32_t>(p.int32_data(i));
        if (type == kBool) v = v != 0;
        std::memcpy(out.data() + static_cast<std::size_t>(i) * static_cast<std::size_t>(width), &v,
                    static_cast<std::size_t>(width)); // little-endian host: the low bytes
    }
    return out;
}

bool hasTypedData(const onnx::TensorProto& p) {
    return p.float_data_size() || p.int32_data_size() || p.int64_data_size() || p.double_data_size() ||
           p.uint64_data_size();
}

std::uint64_t parseNumber(const std::string& text, const std::string& key, const std::string& model,
                          const std::string& name) {
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size())
        fail(model, name, "external data " + key + " '" + text + "' is not a non-negative integer");
    return v;
}

} // namespace

TypeClass classify(int dataType) {
    if (dataType <= 0 || dataType > kLastKnown) return TypeClass::Unknown;
    return elementType(dataType) ? TypeClass::Supported : TypeClass::Unsupported;
}

std::optional<ElementType> elementType(int dataType) {
    switch (dataType) {
    case kFloat:
        return ElementType{DType::F32, false, "f32"};
    case kUint8:
        return ElementType{DType::U8, false, "uint8"};
    case kInt8:
        return ElementType{DType::I8, false, "int8"};
    case kInt16:
        return ElementType{DType::I16, false, "int16"};
    case kInt32:
        return ElementType{DType::I32, false, "int32"};
    case kInt64:
        return ElementType{DType::I64, false, "int64"};
    case kBool:
        return ElementType{DType::Bool, false, "bool"};
    case kFloat16:
        return ElementType{DType::F16, false, "f16"};
    case kDouble:
        return ElementType{DType::F64, false, "f64"};
    case kBfloat16:
        return ElementType{DType::BF16, false, "bf16"};
    case kF8E4M3FN:
        return ElementType{DType::F8E4M3, false, "fp8-e4m3"};
    case kF8E5M2:
        return ElementType{DType::F8E5M2, false, "fp8-e5m2"};
    case kUint4:
        return ElementType{DType::U8, true, "uint4"};
    case kInt4:
        return ElementType{DType::I8, true, "int4"};
    case kF4E2M1:
        return ElementType{DType::F4E2M1, true, "fp4-e2m1"};
    case kF8E8M0:
        return ElementType{DType::E8M0, false, "e8m0"};
    default:
        return std::nullopt;
    }
}

ExternalFiles::ExternalFiles(const std::string& modelPath)
    : m_model(modelPath)
    , m_dir(fs::path(modelPath).parent_path()) {
    if (m_dir.empty()) m_dir = ".";
    std::error_code ec;
    m_realDir = fs::canonical(m_dir, ec);
}

std::shared_ptr<const MappedFile> ExternalFiles::open(const std::string& location,
                                                      const std::string& tensor) {
    if (const auto it = m_open.find(location); it != m_open.end()) return it->second;
    const fs::path loc(location);
    if (location.empty()) fail(m_model, tensor, "external data has no location");
    if (loc.is_absolute() || loc.has_root_name() || loc.has_root_directory())
        fail(m_model, tensor,
             "external data location '" + location +
                 "' is an absolute path; ONNX allows only "
                 "paths relative to the model's folder");
    const fs::path normal = loc.lexically_normal();
    if (normal.empty() || *normal.begin() == ".." || normal == ".")
        fail(m_model, tensor, "external data location '" + location + "' leaves the model's folder");
    const fs::path full = m_dir / normal;
    std::error_code ec;
    const fs::path real = fs::canonical(full, ec);
    if (ec) fail(m_model, tensor, "external data file '" + location + "' cannot be opened: " + ec.message());
    // A symlink inside the folder may still lead out of it: compare the resolved paths.
    const auto [dirEnd, realIt] = std::mismatch(m_realDir.begin(), m_realDir.end(), real.begin(), real.end());
    if (m_realDir.empty() || dirEnd != m_realDir.end())
        fail(m_model, tensor,
             "external data location '" + location + "' resolves to " + real.string() +
                 ", outside the model's folder");
    (void)realIt;
    try {
        requireRegularFile(full.string());
        auto mapping = MappedFile::open(full.string());
        m_paths.push_back(full.string());
        return m_open[location] = std::move(mapping);
    } catch (const FileError& e) {
        fail(m_model, tensor, std::string("external data: ") + e.what());
    }
}

std::optional<OnnxEntry> decodeTensor(onnx::TensorProto& t, const std::string& name, const std::string& where,
                                      const std::string& model, ExternalFiles& external) {
    const int type = t.data_type();
    switch (classify(type)) {
    case TypeClass::Unknown:
        fail(model, name, "unknown ONNX data type " + std::to_string(type));
    case TypeClass::Unsupported:
        return std::nullopt;
    case TypeClass::Supported:
        break;
    }
    const ElementType et = *elementType(type);
    if (t.has_segment()) fail(model, name, "segmented tensors (TensorProto.segment) are not supported");

    OnnxEntry e;
    e.info.name = name;
    e.info.dtype = et.dtype;
    e.packed4 = et.packed4;
    e.dataType = type;
    std::int64_t n = 1;
    for (int i = 0; i < t.dims_size(); ++i) {
        const std::int64_t d = t.dims(i);
        if (d < 0)
            fail(model, name, "dimension " + std::to_string(i) + " is negative (" + std::to_string(d) + ")");
        if (__builtin_mul_overflow(n, d, &n) || n > (std::numeric_limits<std::int64_t>::max() >> 4))
            fail(model, name, "the dimensions' product overflows");
        e.info.shape.push_back(d);
    }
    if (!dimensionsFit(e.info.shape, 16)) fail(model, name, "the dimensions' product overflows");
    const std::uint64_t want = storedBytes(et, n);
    e.info.byteSize = static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(storageBytes(et.dtype));
    const std::string typeNote = et.packed4 ? std::string(" (") + et.name + ", unpacked)" : std::string();

    if (t.data_location() == kExternal) {
        std::string location, offsetText, lengthText;
        for (const auto& kv : t.external_data()) {
            if (kv.key() == "location")
                location = kv.value();
            else if (kv.key() == "offset")
                offsetText = kv.value();
            else if (kv.key() == "length")
                lengthText = kv.value();
        }
        e.external = external.open(location, name);
        e.offset = offsetText.empty() ? 0 : parseNumber(offsetText, "offset", model, name);
        const std::uint64_t length =
            lengthText.empty() ? want : parseNumber(lengthText, "length", model, name);
        if (length != want)
            fail(model, name,
                 "external data length " + std::to_string(length) + " does not match the shape " +
                     toString(e.info.shape) + " (" + std::to_string(want) + " bytes)");
        const std::uint64_t size = e.external->size();
        if (e.offset > size || want > size - e.offset)
            fail(model, name,
                 "external data [" + std::to_string(e.offset) + ", +" + std::to_string(want) +
                     ") lies outside " + location + " (" + std::to_string(size) + " bytes)");
        e.info.location = "external " + printable(location) + " @ " + std::to_string(e.offset) + typeNote;
        return e;
    }
    if (t.has_raw_data()) {
        if (hasTypedData(t)) fail(model, name, "holds both raw_data and a typed data field");
        if (t.raw_data().size() != want)
            fail(model, name,
                 "raw_data holds " + std::to_string(t.raw_data().size()) + " bytes, the shape " +
                     toString(e.info.shape) + " of " + et.name + " needs " + std::to_string(want));
        e.bytes.reset(t.release_raw_data()); // moved: the parsed bytes are never copied
    } else {
        e.bytes = std::make_shared<const std::string>(typedBytes(t, et, type, n, model, name));
    }
    e.info.location = where + typeNote;
    return e;
}

OnnxEntry floatsEntry(const std::string& name, const std::vector<float>& values, bool scalar) {
    OnnxEntry e;
    e.info.name = name;
    e.info.dtype = DType::F32;
    if (!scalar) e.info.shape = {static_cast<std::int64_t>(values.size())};
    e.info.byteSize = 4 * values.size();
    e.bytes =
        std::make_shared<const std::string>(reinterpret_cast<const char*>(values.data()), e.info.byteSize);
    e.info.location = "Constant node";
    return e;
}

OnnxEntry intsEntry(const std::string& name, const std::vector<std::int64_t>& values, bool scalar) {
    OnnxEntry e;
    e.info.name = name;
    e.info.dtype = DType::I64;
    if (!scalar) e.info.shape = {static_cast<std::int64_t>(values.size())};
    e.info.byteSize = 8 * values.size();
    e.bytes =
        std::make_shared<const std::string>(reinterpret_cast<const char*>(values.data()), e.info.byteSize);
    e.info.location = "Constant node";
    return e;
}

} // namespace ql::onnxio
