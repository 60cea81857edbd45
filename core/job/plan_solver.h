#pragma once
// The mixed-precision choice as a multiple-choice knapsack: one option per tensor (a format, with
// the bits it stores and the error it gives), minimising the total error under a total-bits budget.
//
// Exact on the discretised budget: every option's bits are divided by a common unit and rounded up,
// the budget rounded down, and a dynamic programme over the budget levels finds the minimum total
// error among all choices whose rounded bits fit. When the unit divides every option's bits (their
// greatest common divisor, whenever the budget spans few enough levels) the rounding is exact and
// so is the optimum. The same programme gives the whole error-vs-bits front at once.
#include <cstdint>
#include <limits>
#include <vector>

namespace ql {

struct PlanOption {
    std::int64_t bits = 0; // what the tensor stores in this format
    double error = 0;      // the (weighted) squared error it gives; +inf: not available
};

struct PlanSolution {
    bool feasible = false;
    std::vector<int> choice;   // per tensor, the option's index
    std::int64_t bits = 0;     // exact bits of the choice
    double error = 0;          // its total error
    std::int64_t unitBits = 1; // the discretisation unit
    bool exact = true;         // the unit divides every option's bits: the optimum of the real problem
};

struct FrontPoint {
    std::int64_t bits = 0;
    double error = 0;
};

struct PlanSolver {
    /// Budget levels the programme may use; more are merged into coarser units. 0: as many as a
    /// table of 64 MiB of choices holds (at least 2^10, so tens of thousands of expert weights still
    /// fit in memory).
    std::int64_t maxLevels = 0;
};

/// Chooses one option per tensor minimising the summed error with summed (rounded) bits within
/// `budgetBits`. `options[t]` are tensor t's options; infinite or NaN errors are never chosen.
/// Infeasible (no tensor may be left out) when even the smallest choice does not fit.
PlanSolution solvePlan(const std::vector<std::vector<PlanOption>>& options, std::int64_t budgetBits,
                       const PlanSolver& solver = {});

/// The error-vs-bits front: for each budget level up to the largest choice, the least error a choice
/// within it reaches (points where it changes, exact bits of the choice reaching it).
std::vector<FrontPoint> planFront(const std::vector<std::vector<PlanOption>>& options,
                                  const PlanSolver& solver = {});

} // namespace ql
