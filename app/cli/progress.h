#pragma once
// Progress on stderr: a redrawn bar when stderr is a terminal, nothing otherwise (so scripts and
// logs only see results and errors), and never with --quiet.
#include "backend/backend.h"

#include <string>

namespace ql::cli {

class ProgressPrinter {
public:
    explicit ProgressPrinter(bool quiet);
    ~ProgressPrinter();

    /// Starts item `index` of `total` ("3/120 model.layers.2.mlp.up_proj.weight").
    void begin(int index, int total, const std::string& label);
    /// The callback to hand a backend for the current item.
    ProgressFn callback();
    /// Clears the bar (before printing results).
    void finish();

private:
    void draw(double done);

    bool m_enabled;
    bool m_drawn = false;
    std::string m_label;
    int m_lastPermille = -1;
};

} // namespace ql::cli
