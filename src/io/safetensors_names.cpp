#include "io/safetensors_names.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace tensoracle {
namespace {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitution = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitution});
    }
  }
  return row[b.size()];
}

}  // namespace

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
