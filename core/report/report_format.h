#pragma once
// The version of the quantize report's format (report_schema.md): 3 since both error histograms'
// bins follow from the bits of the error. Every writer of a report, whole or a shard's part, writes it.

namespace ql {

inline constexpr int kReportFormatVersion = 3;

} // namespace ql
