#include "runtime/input_file.h"

#include "base/error.h"
#include "io/mapped_file.h"
#include "io/printable.h"
#include "io/tensor_source.h"
#include "runtime/ort_abi.h"

#include <cstring>
#include <filesystem>

namespace ql {
namespace {

std::int32_t ortTypeOf(DType d) {
    switch (d) {
    case DType::F32:
        return ort::kFloat;
    case DType::F64:
        return ort::kDouble;
    case DType::F16:
        return ort::kFloat16;
    case DType::I64:
        return ort::kInt64;
    case DType::I32:
        return ort::kInt32;
    case DType::I16:
        return ort::kInt16;
    case DType::I8:
        return ort::kInt8;
    case DType::U8:
        return ort::kUInt8;
    case DType::Bool:
        return ort::kBool;
    default:
        return 0;
    }
}

std::vector<HostTensor> readSafetensors(const std::string& path) {
    const auto source = openTensorSource(path);
    std::vector<HostTensor> out;
    for (const TensorInfo& info : source->tensors()) {
        HostTensor t{info.name, ortTypeOf(info.dtype), info.shape, {}};
        if (t.type == 0)
            throw FileError(path + ": " + printable(info.name) + ": " + std::string(nameOf(info.dtype)) +
                            " is not an input type evaluate feeds");
        const Tensor values = source->load(info.name);
        t.bytes.assign(values.data(), values.data() + values.byteSize());
        out.push_back(std::move(t));
    }
    return out;
}

template <class T> T le(const std::byte* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// One .npy (format 1.0-3.0): its header's descr, fortran_order and shape, then the values.
HostTensor parseNpy(const std::byte* p, std::uint64_t size, const std::string& name,
                    const std::string& where) {
    auto bad = [&](const std::string& why) { return FileError(where + ": " + printable(name) + ": " + why); };
    if (size < 10 || std::memcmp(p, "\x93NUMPY", 6) != 0) throw bad("not a .npy entry");
    const int major = std::to_integer<int>(p[6]);
    const std::uint64_t headerLen = major == 1 ? le<std::uint16_t>(p + 8) : le<std::uint32_t>(p + 8);
    const std::uint64_t start = (major == 1 ? 10 : 12) + headerLen;
    if (start > size) throw bad("truncated header");
    const std::string header(reinterpret_cast<const char*>(p) + (major == 1 ? 10 : 12), headerLen);
    auto field = [&](const std::string& key) {
        const std::size_t k = header.find("'" + key + "'");
        if (k == std::string::npos) throw bad("header lacks '" + key + "'");
        std::size_t v = header.find(':', k) + 1;
        while (v < header.size() && header[v] == ' ')
            ++v;
        return v;
    };
    std::size_t d = field("descr");
    const std::size_t dEnd = header.find('\'', d + 1);
    const std::string descr = header.substr(d + 1, dEnd - d - 1);
    if (header.compare(field("fortran_order"), 5, "False") != 0) throw bad("Fortran order is not read");
    std::size_t s = field("shape");
    const std::size_t sEnd = header.find(')', s);
    HostTensor t;
    t.name = name;
    for (std::size_t i = s + 1; i < sEnd;) {
        while (i < sEnd && (header[i] == ' ' || header[i] == ','))
            ++i;
        if (i >= sEnd) break;
        std::size_t used = 0;
        t.shape.push_back(std::stoll(header.substr(i, sEnd - i), &used));
        i += used;
    }
    static const std::pair<const char*, std::int32_t> kTypes[] = {
        {"<f4", ort::kFloat}, {"<f8", ort::kDouble}, {"<f2", ort::kFloat16}, {"<i8", ort::kInt64},
        {"<i4", ort::kInt32}, {"<i2", ort::kInt16},  {"<u2", ort::kUInt16},  {"|i1", ort::kInt8},
        {"|u1", ort::kUInt8}, {"|b1", ort::kBool}};
    t.type = 0;
    for (const auto& [text, type] : kTypes)
        if (descr == text) t.type = type;
    if (t.type == 0) throw bad("NumPy dtype '" + descr + "' is not an input type evaluate feeds");
    const std::uint64_t bytes = static_cast<std::uint64_t>(elementCount(t.shape)) * ortElementSize(t.type);
    if (size - start != bytes)
        throw bad(std::to_string(size - start) + " bytes of data for shape " + toString(t.shape) + " " +
                  ortTypeName(t.type) + " (" + std::to_string(bytes) + ")");
    t.bytes.assign(p + start, p + size);
    return t;
}

// A zip archive's entries through its central directory (zip64 sizes and offsets included).
std::vector<HostTensor> readNpz(const std::string& path) {
    const auto file = MappedFile::open(path);
    const std::byte* z = file->data();
    const std::uint64_t size = file->size();
    auto bad = [&](const std::string& why) { return FileError(path + ": " + why); };
    if (size < 22) throw bad("not a .npz (zip) file");
    std::uint64_t eocd = size - 22;
    while (le<std::uint32_t>(z + eocd) != 0x06054b50) {
        if (eocd == 0 || size - eocd > 22 + 65535)
            throw bad("not a .npz (zip) file: no end of central directory");
        --eocd;
    }
    std::uint64_t entries = le<std::uint16_t>(z + eocd + 10);
    std::uint64_t dir = le<std::uint32_t>(z + eocd + 16);
    if (eocd >= 20 && le<std::uint32_t>(z + eocd - 20) == 0x07064b50) { // zip64 locator
        const std::uint64_t rec = le<std::uint64_t>(z + eocd - 12);
        if (rec + 56 > size || le<std::uint32_t>(z + rec) != 0x06064b50) throw bad("bad zip64 directory");
        entries = le<std::uint64_t>(z + rec + 32);
        dir = le<std::uint64_t>(z + rec + 48);
    }
    std::vector<HostTensor> out;
    std::uint64_t at = dir;
    for (std::uint64_t e = 0; e < entries; ++e) {
        if (at + 46 > size || le<std::uint32_t>(z + at) != 0x02014b50) throw bad("bad central directory");
        const auto method = le<std::uint16_t>(z + at + 10);
        std::uint64_t csize = le<std::uint32_t>(z + at + 20), usize = le<std::uint32_t>(z + at + 24);
        const auto nameLen = le<std::uint16_t>(z + at + 28), extraLen = le<std::uint16_t>(z + at + 30),
                   commentLen = le<std::uint16_t>(z + at + 32);
        std::uint64_t local = le<std::uint32_t>(z + at + 42);
        if (at + 46 + nameLen + extraLen > size) throw bad("bad central directory");
        std::string name(reinterpret_cast<const char*>(z + at + 46), nameLen);
        for (std::uint64_t x = at + 46 + nameLen; x + 4 <= at + 46 + nameLen + extraLen;) { // zip64 extra
            const auto id = le<std::uint16_t>(z + x), len = le<std::uint16_t>(z + x + 2);
            if (id == 1) {
                std::uint64_t f = x + 4;
                if (usize == 0xffffffff) usize = le<std::uint64_t>(z + f), f += 8;
                if (csize == 0xffffffff) csize = le<std::uint64_t>(z + f), f += 8;
                if (local == 0xffffffff) local = le<std::uint64_t>(z + f);
            }
            x += 4 + len;
        }
        at += 46 + nameLen + extraLen + commentLen;
        if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) name.resize(name.size() - 4);
        if (method != 0)
            throw bad(printable(name) + ": compressed entry (np.savez_compressed); write it with np.savez");
        if (local + 30 > size || le<std::uint32_t>(z + local) != 0x04034b50) throw bad("bad local header");
        const std::uint64_t data =
            local + 30 + le<std::uint16_t>(z + local + 26) + le<std::uint16_t>(z + local + 28);
        if (data + usize > size || csize != usize)
            throw bad(printable(name) + ": entry past the end of the file");
        out.push_back(parseNpy(z + data, usize, name, path));
    }
    return out;
}

} // namespace

std::vector<HostTensor> readInputFile(const std::string& path) {
    const std::string ext = std::filesystem::path(path).extension().string();
    if (ext == ".npz") return readNpz(path);
    if (ext == ".safetensors") return readSafetensors(path);
    throw FileError(path + ": inputs are read from .safetensors or .npz files");
}

} // namespace ql
