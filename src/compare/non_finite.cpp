// count_non_finite: the NaN and infinity counts of one array.
#include <cmath>

#include "tensoracle/compare.h"
#include "tensoracle/float_formats.h"

namespace tensoracle {

NonFiniteCounts count_non_finite(const ArrayView& array) {
  NonFiniteCounts counts;
  if (!is_floating_point(array.dtype)) return counts;
  const auto n = static_cast<size_t>(array.element_count());
  for (size_t i = 0; i < n; ++i) {
    const double value = load_as_double(array.dtype, array.data, i);
    if (std::isnan(value)) ++counts.nan;
    else if (std::isinf(value)) ++(value > 0 ? counts.posinf : counts.neginf);
  }
  return counts;
}

std::string non_finite_text(const NonFiniteCounts& counts) {
  if (counts.total() == 0) return "all finite";
  std::string text;
  const auto add = [&](int64_t count, const char* what) {
    if (count == 0) return;
    text += (text.empty() ? "" : ", ") + std::to_string(count) + " " + what;
  };
  add(counts.nan, "NaN");
  add(counts.posinf, "+inf");
  add(counts.neginf, "-inf");
  return text;
}

}  // namespace tensoracle
