#pragma once
// Splitting a model run across machines: shard I of N takes a deterministic, byte-balanced part of
// the selected tensors, so N processes (Slurm array tasks, Kubernetes indexed pods) together cover
// every tensor exactly once and a merge of their reports equals one process's report.
#include "io/tensor_source.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ql {

/// Shard `index` of `count`, numbered from 0 (as Slurm array task ids and Kubernetes completion
/// indexes are).
struct ShardSpec {
    int index = 0;
    int count = 1;
};

/// Reads "I/N" (0 <= I < N <= 100000). Throws QuantError saying what is wrong.
ShardSpec parseShard(const std::string& text);
std::string toString(const ShardSpec& shard);

/// The part of `selected` (names in file order) that shard `shard` runs, in file order, with each
/// name's position in `selected`. Tensors are dealt largest first (ties: earlier in the file) to
/// the shard holding the fewest bytes so far (ties: the lowest index): the same split on every
/// machine for the same names, sizes and N, and no shard more than one tensor heavier than needed.
struct ShardPart {
    std::vector<std::string> names;
    std::vector<std::int64_t> positions;
    std::uint64_t bytes = 0;
};
ShardPart shardPart(const TensorSource& source, const std::vector<std::string>& selected,
                    const ShardSpec& shard);

/// A fingerprint of the selected names (FNV-1a over the names in order, as 16 hex digits): parts
/// of one run carry the same, so reports of different selections are never merged.
std::string selectionDigest(const std::vector<std::string>& selected);

} // namespace ql
