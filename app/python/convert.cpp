#include "convert.h"

#include <cmath>

namespace ql::py {

pb::object toPython(const nlohmann::json& j) {
    switch (j.type()) {
    case nlohmann::json::value_t::null:
    case nlohmann::json::value_t::discarded:
        return pb::none();
    case nlohmann::json::value_t::boolean:
        return pb::bool_(j.get<bool>());
    case nlohmann::json::value_t::number_integer:
        return pb::int_(j.get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned:
        return pb::int_(j.get<std::uint64_t>());
    case nlohmann::json::value_t::number_float:
        return pb::float_(j.get<double>());
    case nlohmann::json::value_t::string: {
        const auto& s = j.get_ref<const std::string&>();
        PyObject* str = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
        if (!str) throw pb::error_already_set();
        return pb::reinterpret_steal<pb::object>(str);
    }
    case nlohmann::json::value_t::array: {
        pb::list out(j.size());
        for (std::size_t i = 0; i < j.size(); ++i)
            out[i] = toPython(j[i]);
        return out;
    }
    case nlohmann::json::value_t::object: {
        pb::dict out;
        for (const auto& [key, value] : j.items())
            out[toPython(key)] = toPython(value);
        return out;
    }
    case nlohmann::json::value_t::binary:
        break;
    }
    return pb::none();
}

nlohmann::json fromPython(pb::handle o) {
    if (o.is_none()) return nullptr;
    if (pb::isinstance<pb::bool_>(o)) return o.cast<bool>();
    if (pb::isinstance<pb::int_>(o)) return o.cast<std::int64_t>();
    if (pb::isinstance<pb::float_>(o)) {
        const double v = o.cast<double>();
        return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); // as reports write them
    }
    if (pb::isinstance<pb::str>(o)) return o.cast<std::string>();
    if (pb::isinstance<pb::dict>(o)) {
        nlohmann::json out = nlohmann::json::object();
        for (const auto& [key, value] : o.cast<pb::dict>()) {
            if (!pb::isinstance<pb::str>(key))
                throw pb::type_error("a report's keys are strings, got " + pb::repr(key).cast<std::string>());
            out[key.cast<std::string>()] = fromPython(value);
        }
        return out;
    }
    if (pb::isinstance<pb::list>(o) || pb::isinstance<pb::tuple>(o)) {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& item : o)
            out.push_back(fromPython(item));
        return out;
    }
    // NumPy scalars (a report edited with NumPy values): through their Python value.
    if (pb::hasattr(o, "item") && pb::hasattr(o, "dtype")) return fromPython(o.attr("item")());
    throw pb::type_error("cannot read " + pb::repr(pb::type::of(o)).cast<std::string>() +
                         " as part of a report");
}

pb::dtype numpyDtypeOf(DType t) {
    switch (t) {
    case DType::F64:
        return pb::dtype::of<double>();
    case DType::F32:
        return pb::dtype::of<float>();
    case DType::F16:
        return pb::dtype("float16");
    case DType::BF16:
    case DType::I16:
        return t == DType::I16 ? pb::dtype::of<std::int16_t>() : pb::dtype::of<std::uint16_t>();
    case DType::I8:
    case DType::I4:
        return pb::dtype::of<std::int8_t>();
    case DType::I32:
        return pb::dtype::of<std::int32_t>();
    case DType::I64:
        return pb::dtype::of<std::int64_t>();
    case DType::Bool:
        return pb::dtype("bool");
    case DType::U8:
    case DType::U4:
    case DType::F8E4M3:
    case DType::F8E5M2:
    case DType::F4E2M1:
    case DType::E8M0:
        return pb::dtype::of<std::uint8_t>();
    }
    return pb::dtype::of<std::uint8_t>();
}

pb::array readOnlyView(const void* data, const pb::dtype& dtype, const Shape& shape, pb::handle base) {
    std::vector<pb::ssize_t> dims(shape.begin(), shape.end());
    pb::array a(dtype, dims, {}, data, base);
    a.attr("flags").attr("writeable") = false;
    return a;
}

} // namespace ql::py
