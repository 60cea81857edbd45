// libFuzzer target for the safetensors header parser: any input must either parse or throw
// FileError. Anything else (another exception, a crash, a sanitizer report) is a bug.
#include "base/error.h"
#include "io/safetensors_header.h"

#include <cstddef>
#include <cstdint>
#include <span>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
    try {
        const ql::SafetensorsHeader h = ql::parseSafetensors(bytes, "fuzz.safetensors");
        // Whatever parsed must be safe to address: every tensor lies inside the input.
        for (const auto& e : h.entries)
            if (h.dataStart + e.end > size || e.begin > e.end) __builtin_trap();
    } catch (const ql::FileError&) {
    }
    return 0;
}
