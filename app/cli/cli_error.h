#pragma once
// The two ways a command fails: bad usage (exit 2) and a failed job (exit 1). Either way the
// message is one line that names the file, the tensor and the reason.
#include "io/printable.h"

#include <stdexcept>
#include <string>

namespace ql::cli {

/// The command line itself is wrong (conflicting or malformed flags): exit code 2.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// "FILE: tensor 'NAME': reason", the one shape every job error takes.
inline std::string where(const std::string& file, const std::string& tensor, const std::string& reason) {
    std::string s = file;
    if (!tensor.empty()) s += ": tensor '" + printable(tensor) + "'";
    return s + ": " + reason;
}

/// A message as printed: one line, and nothing in it (a name, a key, a path from a file) that a
/// terminal would act on (printable()).
inline std::string oneLine(const std::string& s) {
    return printable(s);
}

} // namespace ql::cli
