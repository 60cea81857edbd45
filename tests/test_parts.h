#pragma once
// A data-driven suite split into parts that ctest runs side by side (ql_add_test's PARTS): each
// part's ctest entry sets QUANTLENS_TEST_PART to "k/n" and keeps the rows whose index is k modulo n.
// Every row belongs to exactly one part; without the variable (run by hand) a suite keeps them all.
#include <QtGlobal>
#include <cstdio>

namespace qltest {

/// Whether data row `row` belongs to this run's part.
inline bool inThisPart(long row) {
    const QByteArray part = qgetenv("QUANTLENS_TEST_PART");
    if (part.isEmpty()) return true;
    int k = 0, n = 0;
    if (std::sscanf(part.constData(), "%d/%d", &k, &n) != 2 || n < 1 || k < 0 || k >= n)
        qFatal("QUANTLENS_TEST_PART must be k/n with 0 <= k < n, not '%s'", part.constData());
    return row % n == k;
}

} // namespace qltest
