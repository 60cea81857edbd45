#pragma once
// What a run says besides its table: what the file holds that was not read, a calibration far worse
// than absmax, tensors the importance file had nothing for. Made once here as values; each front end
// prints them its own way (the CLI as "note:" lines on stderr), in the same words.
#include "io/tensor_source.h"
#include "report/report.h"

#include <string>
#include <vector>

namespace ql {

struct RunNote {
    enum class Kind { NotRead, Calibration, NoImportance };
    Kind kind = Kind::NotRead;
    std::vector<std::string> tensors; // what it is about: one tensor, or several sharing the reason
    std::string text;                 // the reason, without the file and the tensor
};

/// The quantized tensors that have no importance-weighted error, one note per reason.
std::vector<RunNote> importanceNotes(const std::vector<TensorReport>& reports);
/// What the file holds that the run did not read; `exportPath` non-empty: an export goes without it.
std::vector<RunNote> notReadNotes(const std::vector<UnlistedEntry>& unread, const std::string& exportPath);
/// A calibration far worse than absmax is said, not hidden: one note per tensor that has one.
std::vector<RunNote> calibrationNotes(const std::vector<TensorReport>& reports);

/// "FILE: tensor 'NAME': text"; for several tensors "FILE: N tensors ('FIRST', ...): text".
std::string noteText(const std::string& file, const RunNote& note);

} // namespace ql
