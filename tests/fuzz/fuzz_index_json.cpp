// libFuzzer target for untrusted JSON that is not a safetensors header (a sharded checkpoint's
// index): the shape check must refuse anything too deep before the tree is built, so that parsing,
// printing and destroying what passes can never exhaust the stack. Any input either passes and
// round-trips, or is refused with FileError / a JSON error.
#include "base/error.h"
#include "io/untrusted_json.h"

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        ql::checkJsonShape(text, "fuzz.index.json", "index", 16);
        const nlohmann::json j = nlohmann::json::parse(text);
        (void)j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); // what an error message does
    } catch (const ql::FileError&) {
    } catch (const nlohmann::json::exception&) {
    }
    return 0;
}
