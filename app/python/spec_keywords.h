#pragma once
// Python keywords to core's SpecOptions, through core's one table of spec options (the table the CLI's
// SPEC flags come from): the same names (preset=, dtype=, group_size=, ...) and the same values as
// typed on the command line, plus what Python can give directly: ints and sequences of ints for axis
// and block, NumPy arrays for scales, zero points and ragged group ends.
#include "job/spec_options.h"

#include <pybind11/pybind11.h>
#include <string>
#include <vector>

namespace ql::py {

/// A spec and how to run it: the keywords of quantize() and of each spec of compare().
struct RunKeywords {
    SpecOptions spec;
    std::string backend = "cpu";
    int repeat = 1;
    bool packed = false;
};

/// The keywords beyond the spec table that `function` takes (and RunKeywords holds).
enum class Extras { Run, SpecOnly };

/// Reads `kw` into RunKeywords. Throws pybind11::type_error for an unknown keyword (naming the closest
/// ones) or a value of the wrong kind, pybind11::value_error for an empty or impossible value.
/// `ignored`: keywords the caller reads itself.
RunKeywords readKeywords(const pybind11::dict& kw, const char* function, Extras extras,
                         const std::vector<std::string>& ignored = {});

/// (keyword, flag, help, kind, default) in the order of the table: what the Python signature is made of.
pybind11::list specKeywords();

} // namespace ql::py
