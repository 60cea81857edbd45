#include "analysis/clip_spans.h"

#include <algorithm>

namespace ql {

std::size_t clipSpanSize(std::size_t groups, std::size_t maxBars) {
    maxBars = std::max<std::size_t>(maxBars, 1);
    return groups > maxBars ? (groups + maxBars - 1) / maxBars : 1;
}

std::vector<ClipSpan> clipSpans(const GroupRows& groups, std::size_t maxBars) {
    const std::size_t size = clipSpanSize(groups.size(), maxBars);
    std::vector<ClipSpan> spans;
    spans.reserve((groups.size() + size - 1) / size);
    for (std::size_t g0 = 0; g0 < groups.size(); g0 += size) {
        const std::size_t g1 = std::min(groups.size(), g0 + size);
        ClipSpan s;
        // A single group sits on its own index; a span on the middle of the indices it covers.
        s.key = size == 1 ? static_cast<double>(g0) : 0.5 * static_cast<double>(g0 + g1 - 1);
        for (std::size_t g = g0; g < g1; ++g) {
            s.merged.merge(groups[g]);
            s.clippingDominates += groups[g].clipErrorSq > groups[g].roundErrorSq;
            const double q = groups[g].sqnrDb();
            // !(q >= worst) also takes the first finite value, while worst is still NaN.
            if (std::isfinite(q) && !(q >= s.worstSqnr)) s.worstSqnr = q;
        }
        spans.push_back(s);
    }
    return spans;
}

} // namespace ql
