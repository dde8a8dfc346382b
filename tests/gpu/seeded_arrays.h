// Seeded test inputs for the GPU tests, made in fp64 and rounded once to the wanted type, so a
// failure replays with the same values.
//
//   HostArray x = random_array(DataType::kFloat16, {2, 64, 56, 56}, /*seed=*/85);
//   HostArray var = random_array(DataType::kFloat32, {64}, 3, Fill::kPositive);
//   HostArray ids = index_array(DataType::kInt32, {8, 16}, /*axis_size=*/1000, 43);
//   HostArray w = seeded(DataType::kFloat32, {128, 64}, 1);
#pragma once

#include <random>
#include <vector>

#include "tensoracle/array.h"
#include "tensoracle/float_formats.h"

namespace tensoracle::testing {

// Values in [-0.5, 0.5) from a fixed linear congruential sequence (never all zeros): the engine
// tests' weights and inputs.
inline HostArray seeded(DataType type, const Dims& shape, unsigned seed) {
  HostArray f64 = HostArray::zeros(DataType::kFloat64, shape).value();
  double* p = f64.data_as<double>();
  for (int64_t i = 0; i < f64.element_count(); ++i) {
    seed = seed * 1664525u + 1013904223u;
    p[i] = static_cast<double>(seed >> 8) / static_cast<double>(1u << 24) - 0.5;
  }
  HostArray out = HostArray::zeros(type, shape).value();
  convert_elements(DataType::kFloat64, f64.data(), type, out.data(), static_cast<size_t>(out.element_count()));
  return out;
}

// What random_array draws. Integers (kMixed) are odd values in -99 .. 99, never zero; booleans
// are mixed.
enum class Fill {
  kMixed,          // non-zero, mixed signs, magnitudes 1/8 .. 8
  kPositive,       // 0.25 .. 4 (variances, divisors); integers 1 .. 9
  kNearOne,        // 0.6 .. 1.6 with mixed signs (long products)
  kOffset,         // 1000 + N(0, 1): a large mean over a small spread (norm statistics)
  kSmallIntegers,  // -3 .. 3 in any type: many ties (top-k)
  kGrid,           // uniform in [-1.2, 1.2]: grid-sample coordinates, some outside the image
};

// Seeded values (std::mt19937) of `fill`, rounded to `type`.
inline HostArray random_array(DataType type, Dims shape, uint32_t seed, Fill fill = Fill::kMixed) {
  HostArray array = HostArray::zeros(type, shape).value();
  std::mt19937 rng(seed);
  std::vector<double> values(static_cast<size_t>(array.element_count()));
  std::uniform_real_distribution<double> magnitude(0.125, 8.0), positive(0.25, 4.0), near_one(0.6, 1.6), grid(-1.2, 1.2);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_int_distribution<int> integer(-50, 49), small(-3, 3);
  std::bernoulli_distribution negative(0.5);
  for (double& v : values) {
    if (fill == Fill::kSmallIntegers)
      v = small(rng);
    else if (fill == Fill::kGrid)
      v = grid(rng);
    else if (type == DataType::kBool)
      v = negative(rng) ? 1 : 0;
    else if (!is_floating_point(type))
      v = fill == Fill::kPositive ? 1 + (integer(rng) + 50) % 9 : 2 * integer(rng) + 1;
    else if (fill == Fill::kPositive)
      v = positive(rng);
    else if (fill == Fill::kNearOne)
      v = negative(rng) ? -near_one(rng) : near_one(rng);
    else if (fill == Fill::kOffset)
      v = 1000.0 + normal(rng);
    else
      v = negative(rng) ? -magnitude(rng) : magnitude(rng);
  }
  convert_elements(DataType::kFloat64, values.data(), type, array.data(), values.size());
  return array;
}

// Seeded indices into an axis of `axis_size`, negative ones counting from the end.
inline HostArray index_array(DataType type, Dims shape, int64_t axis_size, uint32_t seed) {
  HostArray array = HostArray::zeros(type, shape).value();
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> index(-axis_size, axis_size - 1);
  std::vector<double> values(static_cast<size_t>(array.element_count()));
  for (double& v : values) v = static_cast<double>(index(rng));
  convert_elements(DataType::kFloat64, values.data(), type, array.data(), values.size());
  return array;
}

}  // namespace tensoracle::testing
