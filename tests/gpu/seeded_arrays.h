// Seeded test inputs for the GPU engine tests: values in [-0.5, 0.5) from a fixed linear
// congruential sequence (never all zeros), made in fp64 and rounded once to the wanted type.
#pragma once

#include "tensoracle/array.h"
#include "tensoracle/float_formats.h"

namespace tensoracle::testing {

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

}  // namespace tensoracle::testing
