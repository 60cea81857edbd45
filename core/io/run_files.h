#pragma once
// The one check of what a run writes against what it reads. Every command and app action lists its
// inputs (the model's files, and every file a part, plan, journal, rules or importance file names),
// the folders nothing may be written into (an input model's own folder, for the exports that put
// files beside themselves), and its outputs; check() refuses, before anything is written, an output
// that is an input (by identity: links and other spellings of a path are caught), that lies in a
// protected folder, or that another output of the same run also writes.
#include <string>
#include <vector>

namespace ql {

class TensorSource;

class RunFiles {
public:
    /// A file the run reads; `role` says which ("the rules file", "the model", ...).
    void input(const std::string& path, const std::string& role);
    /// Each file of an opened model (its shards, its index, its external data).
    void input(const TensorSource& source, const std::string& role = "the model");
    /// A folder no weights of this run may be written into, and why.
    void protectFolder(const std::string& folder, const std::string& why);
    /// A file the run writes; `flag` names where it came from ("--junit", "the merged index").
    void output(const std::string& path, const std::string& flag);
    /// A file of weights (an export, a weight index, an export's config.json): also kept out of the
    /// protected folders.
    void weightsOutput(const std::string& path, const std::string& flag);
    /// Throws FileError naming the output, the file it would replace, and that file's role.
    void check() const;

private:
    struct Entry {
        std::string path, label;
        bool weights = false;
    };
    std::vector<Entry> m_inputs, m_folders, m_outputs;
};

/// True when the two paths name the same file, or would once `a` is written (neither need exist).
bool sameFile(const std::string& a, const std::string& b);

/// The folder a model lives in: the path itself when it was opened as a folder, else its parent.
std::string modelFolderOf(const std::string& modelPath);

} // namespace ql
