#include "job/shard.h"

#include "base/error.h"
#include "job/tensor_measurement.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace ql {

ShardSpec parseShard(const std::string& text) {
    const auto slash = text.find('/');
    auto number = [&](const std::string& part, const char* what) {
        if (part.empty() || part.size() > 6 || part.find_first_not_of("0123456789") != std::string::npos)
            throw QuantError("shard '" + text + "': " + what +
                             " is not a whole number (write I/N, e.g. 0/4)");
        return std::stoi(part);
    };
    if (slash == std::string::npos)
        throw QuantError("shard '" + text + "': write I/N, e.g. 0/4 for the first of four");
    ShardSpec s{number(text.substr(0, slash), "I"), number(text.substr(slash + 1), "N")};
    if (s.count < 1 || s.count > 100000) throw QuantError("shard '" + text + "': N must be 1 to 100000");
    if (s.index >= s.count)
        throw QuantError("shard '" + text + "': shards are numbered 0 to " + std::to_string(s.count - 1));
    return s;
}

std::string toString(const ShardSpec& shard) {
    return std::to_string(shard.index) + "/" + std::to_string(shard.count);
}

ShardPart shardPart(const TensorSource& source, const std::vector<std::string>& selected,
                    const ShardSpec& shard) {
    const std::size_t n = selected.size();
    std::vector<std::uint64_t> bytes(n);
    for (std::size_t i = 0; i < n; ++i)
        bytes[i] = requireTensor(source, selected[i]).byteSize;
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return bytes[a] > bytes[b]; });

    // Least-loaded first; a shard's load grows only, so a linear scan per tensor would be O(n N):
    // a heap keyed by (load, index) keeps it O(n log N).
    using Slot = std::pair<std::uint64_t, int>;
    std::vector<Slot> heap;
    heap.reserve(static_cast<std::size_t>(std::max(shard.count, 0)));
    for (int s = 0; s < shard.count; ++s)
        heap.emplace_back(0, s);
    const auto later = [](const Slot& a, const Slot& b) { return a > b; };
    std::make_heap(heap.begin(), heap.end(), later);
    std::vector<char> mine(n, 0);
    ShardPart part;
    for (std::size_t i : order) {
        std::pop_heap(heap.begin(), heap.end(), later);
        Slot& slot = heap.back();
        if (slot.second == shard.index) {
            mine[i] = 1;
            part.bytes += bytes[i];
        }
        slot.first += bytes[i];
        std::push_heap(heap.begin(), heap.end(), later);
    }
    for (std::size_t i = 0; i < n; ++i)
        if (mine[i]) {
            part.names.push_back(selected[i]);
            part.positions.push_back(static_cast<std::int64_t>(i));
        }
    return part;
}

std::string selectionDigest(const std::vector<std::string>& selected) {
    std::uint64_t h = 1469598103934665603ULL;
    for (const auto& name : selected) {
        for (unsigned char c : name)
            h = (h ^ c) * 1099511628211ULL;
        h = (h ^ 0xffu) * 1099511628211ULL; // a separator no UTF-8 name holds
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    return hex;
}

} // namespace ql
