#pragma once
// Errors carry a message a user can act on: which file, which tensor, and why.
#include <stdexcept>
#include <string>

namespace ql {

/// An impossible or unsupported quantization request (spec, shape, parameters).
class QuantError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// A malformed or unreadable file; the message names the file (and tensor, when known).
class FileError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

} // namespace ql
