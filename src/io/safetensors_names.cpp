#include "io/safetensors_names.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace tensoracle {

size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic programme: two back are needed for transpositions.
  std::vector<size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        current[j] = std::min(current[j], before[j - 2] + 1);
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::string nearby_names(const std::vector<std::string_view>& candidates, std::string_view name, size_t count) {
  std::vector<std::pair<size_t, std::string_view>> ranked;
  ranked.reserve(candidates.size());
  for (std::string_view candidate : candidates) ranked.emplace_back(edit_distance(candidate, name), candidate);
  count = std::min(count, ranked.size());
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(count), ranked.end());
  std::string out;
  for (size_t i = 0; i < count; ++i) out += fmt::format("{}'{}'", i == 0 ? "" : ", ", ranked[i].second);
  return out;
}

}  // namespace tensoracle
