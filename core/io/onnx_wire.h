#pragma once
// What parsing an ONNX file would cost, read from the protobuf wire format before the parse: protobuf
// builds every message of the model at once, and a few bytes of file can cost hundreds once parsed
// (a 44-byte Constant node is some 600 bytes of messages and strings). Internal to the ONNX source.
#include <cstddef>
#include <cstdint>

namespace ql::onnxio {

/// The memory onnx::ModelProto::ParseFromArray would take for `data`, estimated from its messages,
/// strings and repeated values (message sizes from the generated classes themselves). Linear in
/// `size`; stops counting once past `limit`, and where the wire format cannot be followed (a length
/// past the end, a malformed number), which the parse itself then refuses.
std::uint64_t parsedBytes(const std::byte* data, std::size_t size, std::uint64_t limit);

} // namespace ql::onnxio
