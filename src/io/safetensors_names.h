// "Did you mean" help for names not found: tensors, CLI commands.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tensoracle {

// Edit distance: single-character insertions, deletions, substitutions and transpositions of
// neighbours ("biuld" is one edit from "build"), each counting 1 (optimal string alignment).
size_t edit_distance(std::string_view a, std::string_view b);

// Up to `count` of `candidates` closest to `name` (edit distance, ties by name), formatted as
// "'a', 'b', 'c'"; empty when there are no candidates.
std::string nearby_names(const std::vector<std::string_view>& candidates, std::string_view name, size_t count = 3);

}  // namespace tensoracle
