// "Did you mean" help for not-found tensor names.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tensoracle {

// Up to `count` of `candidates` closest to `name` (edit distance, ties by name), formatted as
// "'a', 'b', 'c'"; empty when there are no candidates.
std::string nearby_names(const std::vector<std::string_view>& candidates, std::string_view name, size_t count = 3);

}  // namespace tensoracle
