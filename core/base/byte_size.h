#pragma once
// A byte count as people read it: "1.5 MB" (units of 1024, one decimal above bytes), the way the
// tensor browser, the planner and the model summary say sizes.
#include <cstdio>
#include <string>

namespace ql {

inline std::string byteSizeText(double bytes) {
    const char* units[] = {"B", "KB", "MB", "GB", "TB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        ++u;
    }
    char text[32];
    std::snprintf(text, sizeof text, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
    return text;
}

} // namespace ql
