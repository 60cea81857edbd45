#include "spec_keywords.h"

#include "base/suggest.h"

#include <algorithm>
#include <pybind11/numpy.h>

namespace ql::py {
namespace pb = pybind11;

namespace {

const std::vector<std::string> kRunKeywords = {"backend", "repeat", "packed"};

std::string typeName(pb::handle v) {
    return pb::type::of(v).attr("__name__").cast<std::string>();
}

bool isInteger(pb::handle v) {
    return !pb::isinstance<pb::bool_>(v) && (pb::isinstance<pb::int_>(v) || PyIndex_Check(v.ptr()));
}

// An int, or anything with __index__ (NumPy's integers).
std::int64_t intOf(pb::handle v) {
    return pb::reinterpret_steal<pb::int_>(PyNumber_Index(v.ptr())).cast<std::int64_t>();
}

// The CLI's text for a value: a str as typed, an int, or a sequence of ints as "1,128".
std::string textOf(const SpecField& f, pb::handle v) {
    if (pb::isinstance<pb::str>(v)) {
        std::string s = v.cast<std::string>();
        // The CLI's rule for every option: an empty value is a mistake, never "left out".
        if (s.empty()) throw pb::value_error(f.flag + ": empty; give a value or leave it out");
        return s;
    }
    if (isInteger(v)) return std::to_string(intOf(v));
    if (pb::isinstance<pb::sequence>(v)) {
        std::string s;
        for (const auto& item : v) {
            if (!isInteger(item))
                throw pb::type_error(f.keyword + " takes an int or a sequence of ints, got an item of type " +
                                     typeName(item));
            s += (s.empty() ? "" : ",") + std::to_string(intOf(item));
        }
        if (s.empty()) throw pb::value_error(f.flag + ": empty; give a value or leave it out");
        return s;
    }
    throw pb::type_error(f.keyword + " takes " +
                         (f.flag == "--axis" || f.flag == "--block" ? "an int, a sequence of ints or " : "") +
                         "a str as " + f.flag + " does, got " + typeName(v));
}

// Scales, zero points or group ends given as values (anything NumPy reads as numbers), not a file.
template <typename T> std::vector<T> valuesOf(const SpecField& f, pb::handle v) {
    pb::array a;
    try {
        a = pb::array::ensure(v);
    } catch (...) {
    }
    if (!a || a.dtype().kind() == 'O' || a.dtype().kind() == 'U' || a.dtype().kind() == 'S')
        throw pb::type_error(f.keyword + " takes an array of numbers or 'FILE:TENSOR', got " + typeName(v));
    const auto flat = pb::array_t<T, pb::array::c_style | pb::array::forcecast>::ensure(a);
    if (!flat)
        throw pb::type_error(f.keyword + ": cannot read " + pb::str(a.dtype()).cast<std::string>() +
                             " values");
    return std::vector<T>(flat.data(), flat.data() + flat.size());
}

void setField(SpecOptions& o, const SpecField& f, pb::handle v) {
    if (f.on) {
        if (!pb::isinstance<pb::bool_>(v))
            throw pb::type_error(f.keyword + " takes True or False, got " + typeName(v));
        o.*f.on = v.cast<bool>();
        return;
    }
    if (f.count) {
        if (!isInteger(v)) throw pb::type_error(f.keyword + " takes a positive int, got " + typeName(v));
        const auto n = intOf(v);
        if (n <= 0) throw pb::value_error(f.flag + ": must be a positive integer");
        o.*f.count = n;
        return;
    }
    const bool file = pb::isinstance<pb::str>(v);
    if (f.text == &SpecOptions::scale && !file) {
        o.scaleValues = valuesOf<float>(f, v);
        return;
    }
    if (f.text == &SpecOptions::zeroPoint && !file) {
        o.zeroPointValues = valuesOf<float>(f, v);
        return;
    }
    if (f.text == &SpecOptions::groupIndex && !file) {
        o.groupEnds = valuesOf<std::int64_t>(f, v);
        return;
    }
    o.*f.text = textOf(f, v);
}

} // namespace

RunKeywords readKeywords(const pb::dict& kw, const char* function, Extras extras,
                         const std::vector<std::string>& ignored) {
    RunKeywords r;
    for (const auto& [key, value] : kw) {
        const std::string k = key.cast<std::string>();
        if (std::find(ignored.begin(), ignored.end(), k) != ignored.end()) continue;
        if (value.is_none()) continue; // None: left out, the CLI's default
        if (const SpecField* f = specFieldOfKeyword(k)) {
            setField(r.spec, *f, value);
            continue;
        }
        if (extras == Extras::Run && k == "backend") {
            if (!pb::isinstance<pb::str>(value))
                throw pb::type_error("backend takes a str, got " + typeName(value));
            r.backend = value.cast<std::string>();
            continue;
        }
        if (extras == Extras::Run && k == "repeat") {
            if (!isInteger(value)) throw pb::type_error("repeat takes an int, got " + typeName(value));
            const auto n = intOf(value);
            if (n < 1 || n > 1000000)
                throw pb::value_error("repeat: " + std::to_string(n) + " not in range [1 - 1000000]");
            r.repeat = static_cast<int>(n);
            continue;
        }
        if (extras == Extras::Run && k == "packed") {
            if (!pb::isinstance<pb::bool_>(value))
                throw pb::type_error("packed takes True or False, got " + typeName(value));
            r.packed = value.cast<bool>();
            continue;
        }
        std::vector<std::string> known = ignored;
        for (const SpecField& f : specFields())
            known.push_back(f.keyword);
        if (extras == Extras::Run) known.insert(known.end(), kRunKeywords.begin(), kRunKeywords.end());
        throw pb::type_error(std::string(function) + "() got an unexpected keyword argument '" + k + "'" +
                             didYouMean(k, known));
    }
    return r;
}

pb::list specKeywords() {
    const SpecOptions defaults;
    pb::list out;
    for (const SpecField& f : specFields()) {
        pb::object value = pb::none(); // left out: what the CLI does without the flag
        if (f.on) value = pb::bool_(defaults.*f.on);
        if (f.text && !(defaults.*f.text).empty()) value = pb::str(defaults.*f.text);
        out.append(pb::make_tuple(f.keyword, f.flag, f.help,
                                  f.on      ? "switch"
                                  : f.count ? "count"
                                            : "text",
                                  value));
    }
    return out;
}

} // namespace ql::py
