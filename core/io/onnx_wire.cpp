#include "io/onnx_wire.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <onnx/onnx_pb.h> // onnx-ml.pb.h (ONNX_ML, set by the onnx_proto target)
#include <unordered_map>

namespace ql::onnxio {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

// What protobuf 3.21's generated classes allocate, measured against glibc: each allocation's header and
// rounding; a string field's std::string (ArenaStringPtr points to one on the heap, a repeated string
// holds one per element) and its text past the small-string buffer; a repeated element's slot in its
// array, which grows by doubling; an unknown field's record.
constexpr std::uint64_t kAllocation = 16;
constexpr std::uint64_t kStringBytes = 32 + kAllocation;
constexpr std::uint64_t kShortString = 15;
constexpr std::uint64_t kSlot = 2 * sizeof(void*);
constexpr std::uint64_t kUnknownField = 16;
constexpr int kMaxDepth = 100; // protobuf's recursion limit: deeper, the parse fails
constexpr std::uint64_t kMaxFieldNumber = (1u << 29) - 1;

enum Wire { Varint = 0, Fixed64 = 1, Delimited = 2, StartGroup = 3, EndGroup = 4, Fixed32 = 5 };

bool varint(const std::uint8_t*& p, const std::uint8_t* end, std::uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64 && p < end; shift += 7) {
        const std::uint8_t b = *p++;
        v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
        if (!(b & 0x80)) return true;
    }
    return false;
}

// The bytes one element of a repeated scalar takes in memory.
std::uint64_t elementBytes(const FieldDescriptor* f) {
    switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_BOOL:
        return 1;
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT64:
    case FieldDescriptor::CPPTYPE_DOUBLE:
        return 8;
    default:
        return 4;
    }
}

class Scan {
public:
    explicit Scan(std::uint64_t limit)
        : m_limit(limit) {}

    std::uint64_t total = 0;

    // The fields from `p` to `end` of a message of type `d` (nullptr: an unknown group's). `group` is
    // the field number of the group being read, whose end tag ends it; 0 for a delimited message.
    // False where the scan stops: malformed, too deep, or past the limit.
    bool fields(const std::uint8_t*& p, const std::uint8_t* end, const Descriptor* d, int depth,
                std::uint64_t group = 0) {
        if (depth > kMaxDepth) return false;
        while (p < end) {
            std::uint64_t tag = 0;
            if (!varint(p, end, tag)) return false;
            const auto wire = static_cast<int>(tag & 7);
            const std::uint64_t number = tag >> 3;
            if (number == 0 || number > kMaxFieldNumber) return false;
            if (wire == EndGroup) return group == number; // a group ends at its own end tag
            const FieldDescriptor* f = d ? d->FindFieldByNumber(static_cast<int>(number)) : nullptr;
            if (!field(p, end, f, wire, number, depth)) return false;
            if (total > m_limit) return false;
        }
        return group == 0;
    }

private:
    bool field(const std::uint8_t*& p, const std::uint8_t* end, const FieldDescriptor* f, int wire,
               std::uint64_t number, int depth) {
        const bool repeated = f && f->is_repeated();
        // A value kept in the message itself costs nothing more; a repeated one its element; an
        // unknown one its record.
        const std::uint64_t scalar = !f ? kUnknownField : repeated ? 2 * elementBytes(f) : 0;
        std::uint64_t value = 0;
        switch (wire) {
        case Varint:
            if (!varint(p, end, value)) return false;
            total += scalar;
            return true;
        case Fixed64:
        case Fixed32: {
            const std::uint64_t n = wire == Fixed64 ? 8 : 4;
            if (static_cast<std::uint64_t>(end - p) < n) return false;
            p += n;
            total += scalar;
            return true;
        }
        case StartGroup: // never in ONNX; protobuf keeps it as an unknown field
            total += kUnknownField;
            return fields(p, end, nullptr, depth + 1, number);
        case Delimited:
            break;
        default:
            return false;
        }
        std::uint64_t length = 0;
        if (!varint(p, end, length) || length > static_cast<std::uint64_t>(end - p)) return false;
        const std::uint8_t* body = p;
        p += length;
        if (f && f->type() == FieldDescriptor::TYPE_MESSAGE) {
            total += sizeOf(f->message_type()) + kAllocation + (repeated ? kSlot : 0);
            return fields(body, p, f->message_type(), depth + 1);
        }
        const std::uint64_t text = length > kShortString ? length + 1 + kAllocation : 0;
        if (!f) {
            total += kUnknownField + kStringBytes + text;
        } else if (f->type() == FieldDescriptor::TYPE_STRING || f->type() == FieldDescriptor::TYPE_BYTES) {
            total += kStringBytes + text + (repeated ? kSlot : 0);
        } else if (repeated) { // packed numbers: count them
            std::uint64_t count = 0;
            switch (f->type()) {
            case FieldDescriptor::TYPE_FLOAT:
            case FieldDescriptor::TYPE_FIXED32:
            case FieldDescriptor::TYPE_SFIXED32:
                count = length / 4;
                break;
            case FieldDescriptor::TYPE_DOUBLE:
            case FieldDescriptor::TYPE_FIXED64:
            case FieldDescriptor::TYPE_SFIXED64:
                count = length / 8;
                break;
            default: // varints: one ends at each byte below 0x80
                for (const std::uint8_t* q = body; q < p; ++q)
                    count += (*q & 0x80) == 0;
                break;
            }
            total += count * elementBytes(f) + kAllocation;
        }
        return true;
    }

    std::uint64_t sizeOf(const Descriptor* d) {
        const auto [it, fresh] = m_sizes.emplace(d, 0);
        if (fresh) {
            const google::protobuf::Message* prototype =
                google::protobuf::MessageFactory::generated_factory()->GetPrototype(d);
            it->second = prototype ? prototype->SpaceUsedLong() : 256;
        }
        return it->second;
    }

    std::uint64_t m_limit;
    std::unordered_map<const Descriptor*, std::uint64_t> m_sizes;
};

} // namespace

std::uint64_t parsedBytes(const std::byte* data, std::size_t size, std::uint64_t limit) {
    Scan scan(limit);
    const auto* p = reinterpret_cast<const std::uint8_t*>(data);
    scan.total = sizeof(onnx::ModelProto);
    (void)scan.fields(p, p + size, onnx::ModelProto::descriptor(), 0);
    return scan.total;
}

} // namespace ql::onnxio
