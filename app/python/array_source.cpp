#include "array_source.h"

#include "base/error.h"

namespace ql::py {
namespace pb = pybind11;

namespace {

std::string shapeText(const std::vector<pb::ssize_t>& v) {
    std::string s = "(";
    for (std::size_t i = 0; i < v.size(); ++i)
        s += (i ? ", " : "") + std::to_string(v[i]);
    return s + (v.size() == 1 ? ",)" : ")");
}

// What the object's element type is called: NumPy's name where it has one, else the buffer format.
std::string elementName(pb::handle x, const std::string& format) {
    if (pb::hasattr(x, "dtype")) return pb::str(x.attr("dtype")).cast<std::string>();
    return "buffer format '" + format + "'";
}

} // namespace

ArrayInput readArray(pb::handle x, const std::optional<std::string>& inputDtype) {
    if (!PyObject_CheckBuffer(x.ptr()))
        throw pb::type_error(
            "x must be a NumPy array (or another buffer) of float32, float16 or bf16 values, got " +
            pb::type::of(x).attr("__name__").cast<std::string>());
    ArrayInput in{pb::reinterpret_borrow<pb::buffer>(x).request(), {}};
    const pb::buffer_info& b = in.buffer;
    std::string format = b.format;
    if (!format.empty() && (format[0] == '@' || format[0] == '=' || format[0] == '<')) format.erase(0, 1);
    std::optional<DType> dtype;
    if (format == "f" && b.itemsize == 4) dtype = DType::F32;
    if (format == "e" && b.itemsize == 2) dtype = DType::F16;
    const bool bits16 = format == "H" && b.itemsize == 2;
    const std::string name = elementName(x, b.format);
    if (inputDtype) {
        const std::string& want = *inputDtype;
        if (want == "bf16" || want == "bfloat16") {
            if (!bits16)
                throw pb::type_error("input_dtype 'bf16' reads bf16 bits from a uint16 array, got " + name);
            dtype = DType::BF16;
        } else if (want == "f32" || want == "float32" || want == "f16" || want == "float16") {
            const DType named = want == "f32" || want == "float32" ? DType::F32 : DType::F16;
            if (dtype != named)
                throw pb::type_error("input_dtype '" + want + "' does not match the array's " + name);
        } else {
            throw pb::value_error("unknown input_dtype '" + want + "' (choose f32, f16, bf16)");
        }
    }
    if (!dtype) {
        if (bits16)
            throw pb::type_error("x is " + name +
                                 ": for bf16 bits in a uint16 array pass input_dtype='bf16'");
        throw pb::type_error("x is " + name +
                             ": quantize reads float32, float16 or bf16 values (a uint16 array with "
                             "input_dtype='bf16'); convert it, e.g. x.astype(numpy.float32)");
    }
    // In place means row-major: any other layout would need a copy, which the caller makes knowingly.
    bool empty = false;
    for (pb::ssize_t d : b.shape)
        empty = empty || d == 0;
    pb::ssize_t expected = b.itemsize;
    bool contiguous = true;
    for (std::size_t i = b.shape.size(); i-- > 0;) {
        if (b.shape[i] != 1 && b.strides[i] != expected) contiguous = false;
        expected *= b.shape[i];
    }
    if (!contiguous && !empty)
        throw pb::value_error("x is not C-contiguous (shape " + shapeText(b.shape) + ", strides " +
                              shapeText(b.strides) +
                              "): quantize reads the array in place; pass numpy.ascontiguousarray(x)");
    Shape shape(b.shape.begin(), b.shape.end());
    in.tensor = Tensor(*dtype, std::move(shape), static_cast<const std::byte*>(b.ptr), nullptr);
    return in;
}

ArraySource::ArraySource(std::string name, const Tensor& tensor)
    : m_tensor(tensor) {
    TensorInfo info;
    info.name = std::move(name);
    info.dtype = tensor.dtype();
    info.shape = tensor.shape();
    info.byteSize = tensor.byteSize();
    info.location = "NumPy array";
    m_tensors.push_back(std::move(info));
}

Tensor ArraySource::load(const std::string& name) const {
    if (name != m_tensors[0].name) throw FileError(m_path + ": " + name + ": no such tensor");
    return m_tensor;
}

Tensor ArraySource::loadRows(const std::string& name, std::int64_t begin, std::int64_t count) const {
    const Tensor t = load(name);
    Shape shape = t.shape();
    if (shape.empty() || begin < 0 || count < 0 || begin + count > shape[0])
        throw FileError(m_path + ": " + name + ": rows out of range");
    const std::int64_t rowElements = shape[0] == 0 ? 0 : t.elementCount() / shape[0];
    shape[0] = count;
    return Tensor(t.dtype(), std::move(shape),
                  t.data() + static_cast<std::size_t>(begin * rowElements * storageBytes(t.dtype())),
                  nullptr);
}

} // namespace ql::py
