#include "job/plan_solver.h"

#include "base/error.h"

#include <cmath>
#include <numeric>

namespace ql {
namespace {

bool available(const PlanOption& o) {
    return o.bits >= 0 && std::isfinite(o.error);
}

std::int64_t ceilDiv(std::int64_t a, std::int64_t b) {
    return a / b + (a % b != 0);
}

// The programme over budget levels 0..levels: costs in units of `unit` above each tensor's cheapest
// option. `best[b]` is the least error of a choice whose extra units are at most b.
struct Programme {
    std::int64_t unit = 1;
    bool exact = true;
    std::vector<std::int64_t> minUnits; // per tensor
    std::vector<double> best;
    std::vector<std::uint8_t> pick; // tensors x (levels + 1)

    std::int64_t units(const PlanOption& o) const { return ceilDiv(o.bits, unit); }

    std::vector<int> choiceAt(const std::vector<std::vector<PlanOption>>& options, std::int64_t level) const {
        const auto width = static_cast<std::int64_t>(best.size());
        std::vector<int> choice(options.size());
        for (std::size_t t = options.size(); t-- > 0;) {
            const int k = pick[static_cast<std::size_t>(static_cast<std::int64_t>(t) * width + level)];
            choice[t] = k;
            level -= units(options[t][static_cast<std::size_t>(k)]) - minUnits[t];
        }
        return choice;
    }
};

std::int64_t commonDivisor(const std::vector<std::vector<PlanOption>>& options) {
    std::int64_t g = 0;
    for (const auto& tensor : options)
        for (const auto& o : tensor)
            if (available(o)) g = std::gcd(g, o.bits);
    return g == 0 ? 1 : g;
}

// Unit: the options' common divisor when the span fits in maxLevels levels, else coarser.
std::int64_t unitFor(std::int64_t g, std::int64_t span, std::int64_t maxLevels) {
    const std::int64_t levels = span / g;
    return levels <= maxLevels ? g : g * ceilDiv(levels, maxLevels);
}

Programme run(const std::vector<std::vector<PlanOption>>& options, std::int64_t budgetBits,
              const PlanSolver& solver, bool& feasible) {
    std::int64_t minTotal = 0, maxTotal = 0;
    for (const auto& tensor : options) {
        if (tensor.size() > 255) throw QuantError("the planner takes at most 255 formats per tensor");
        std::int64_t lo = -1, hi = -1;
        for (const auto& o : tensor)
            if (available(o)) {
                lo = lo < 0 ? o.bits : std::min(lo, o.bits);
                hi = std::max(hi, o.bits);
            }
        if (lo < 0) {
            feasible = false;
            return {};
        }
        minTotal += lo;
        maxTotal += hi;
    }
    const std::int64_t span = std::max<std::int64_t>(0, std::min(budgetBits, maxTotal) - minTotal);
    Programme p;
    const std::int64_t maxLevels =
        solver.maxLevels > 0
            ? solver.maxLevels
            : std::max<std::int64_t>(std::int64_t{1} << 10,
                                     (std::int64_t{64} << 20) / std::max<std::size_t>(options.size(), 1));
    const std::int64_t g = commonDivisor(options);
    p.unit = unitFor(g, std::max<std::int64_t>(span, 1), maxLevels);
    p.exact = p.unit == g;
    std::int64_t minUnitsTotal = 0, maxUnitsTotal = 0;
    for (const auto& tensor : options) {
        std::int64_t lo = -1, hi = -1;
        for (const auto& o : tensor)
            if (available(o)) {
                lo = lo < 0 ? p.units(o) : std::min(lo, p.units(o));
                hi = std::max(hi, p.units(o));
            }
        p.minUnits.push_back(lo);
        minUnitsTotal += lo;
        maxUnitsTotal += hi;
    }
    const std::int64_t levels = std::min(budgetBits / p.unit, maxUnitsTotal) - minUnitsTotal;
    feasible = budgetBits >= 0 && levels >= 0;
    if (!feasible) return p;
    const auto width = static_cast<std::size_t>(levels + 1);
    p.best.assign(width, 0.0);
    p.pick.assign(options.size() * width, 0);
    std::vector<double> next(width);
    for (std::size_t t = 0; t < options.size(); ++t) {
        std::fill(next.begin(), next.end(), std::numeric_limits<double>::infinity());
        std::uint8_t* pick = p.pick.data() + t * width;
        for (std::size_t k = 0; k < options[t].size(); ++k) {
            const PlanOption& o = options[t][k];
            if (!available(o)) continue;
            const auto extra = static_cast<std::size_t>(p.units(o) - p.minUnits[t]);
            for (std::size_t b = extra; b < width; ++b) {
                const double e = p.best[b - extra] + o.error;
                if (e < next[b]) {
                    next[b] = e;
                    pick[b] = static_cast<std::uint8_t>(k);
                }
            }
        }
        p.best.swap(next);
    }
    return p;
}

std::int64_t bitsOf(const std::vector<std::vector<PlanOption>>& options, const std::vector<int>& choice) {
    std::int64_t bits = 0;
    for (std::size_t t = 0; t < options.size(); ++t)
        bits += options[t][static_cast<std::size_t>(choice[t])].bits;
    return bits;
}

} // namespace

PlanSolution solvePlan(const std::vector<std::vector<PlanOption>>& options, std::int64_t budgetBits,
                       const PlanSolver& solver) {
    PlanSolution s;
    const Programme p = run(options, budgetBits, solver, s.feasible);
    s.unitBits = p.unit;
    s.exact = p.exact;
    if (!s.feasible) return s;
    const auto level = static_cast<std::int64_t>(p.best.size()) - 1;
    s.choice = p.choiceAt(options, level);
    s.bits = bitsOf(options, s.choice);
    s.error = p.best[static_cast<std::size_t>(level)];
    return s;
}

std::vector<FrontPoint> planFront(const std::vector<std::vector<PlanOption>>& options,
                                  const PlanSolver& solver) {
    bool feasible = false;
    const Programme p = run(options, std::numeric_limits<std::int64_t>::max() / 2, solver, feasible);
    std::vector<FrontPoint> front;
    if (!feasible) return front;
    for (std::size_t b = 0; b < p.best.size(); ++b) {
        if (b > 0 && !(p.best[b] < p.best[b - 1])) continue;
        const auto choice = p.choiceAt(options, static_cast<std::int64_t>(b));
        front.push_back({bitsOf(options, choice), p.best[b]});
    }
    return front;
}

} // namespace ql
