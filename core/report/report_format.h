#pragma once
// The version of the quantize report's format (report_schema.md): 2 since the histograms' edges
// follow from the plan and the params. Every writer of a report, whole or a shard's part, writes it.

namespace ql {

inline constexpr int kReportFormatVersion = 3;

} // namespace ql
