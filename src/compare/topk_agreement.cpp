// topk_agreement (compare.h).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/errors.h"
#include "tensoracle/compare.h"
#include "tensoracle/float_formats.h"

namespace tensoracle {

namespace {

// The positions of the k largest values of row `row` (value descending, index ascending, NaN last).
std::vector<int64_t> top_positions(const ArrayView& a, int64_t row, int64_t width, int k, std::vector<double>& values,
                                   std::vector<int64_t>& order) {
  for (int64_t i = 0; i < width; ++i) values[i] = load_as_double(a.dtype, a.data, static_cast<size_t>(row * width + i));
  std::iota(order.begin(), order.end(), 0);
  const auto before = [&](int64_t x, int64_t y) {
    const double vx = values[x], vy = values[y];
    if (std::isnan(vx) || std::isnan(vy)) return std::isnan(vy) && (!std::isnan(vx) || x < y);
    return vx > vy || (vx == vy && x < y);
  };
  std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
  std::vector<int64_t> top(order.begin(), order.begin() + k);
  std::sort(top.begin(), top.end());
  return top;
}

}  // namespace

Result<double> topk_agreement(const ArrayView& candidate, const ArrayView& reference, int k) {
  if (candidate.shape != reference.shape)
    return invalid_argument("top-k agreement: candidate shape {} differs from reference shape {}",
                            candidate.shape.to_string(), reference.shape.to_string());
  if (candidate.shape.rank() == 0) return invalid_argument("top-k agreement needs an array with a class axis, not a scalar");
  const int64_t width = candidate.shape[candidate.shape.rank() - 1];
  if (width < 1) return invalid_argument("top-k agreement: the last axis is empty");
  if (k < 1 || k > width) return invalid_argument("top-k agreement: k = {} is outside [1, {}] (the last axis)", k, width);
  const int64_t rows = candidate.element_count() / width;
  if (rows == 0) return 1.0;
  std::vector<double> values(static_cast<size_t>(width));
  std::vector<int64_t> order(static_cast<size_t>(width));
  int64_t agree = 0;
  for (int64_t r = 0; r < rows; ++r)
    agree += top_positions(candidate, r, width, k, values, order) == top_positions(reference, r, width, k, values, order);
  return static_cast<double>(agree) / static_cast<double>(rows);
}

}  // namespace tensoracle
