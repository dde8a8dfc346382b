// Helpers shared by the compare tests.
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "tensoracle/array.h"
#include "tensoracle/float_formats.h"

namespace tensoracle::testing {

// An array of `dtype` and `shape` holding `values` converted from fp64 (float_formats.h rules).
inline HostArray make_array(DataType dtype, Dims shape, const std::vector<double>& values) {
  auto array = HostArray::zeros(dtype, std::move(shape));
  EXPECT_TRUE(array.is_ok()) << array.status().to_string();
  EXPECT_EQ(static_cast<size_t>(array->element_count()), values.size());
  convert_elements(DataType::kFloat64, values.data(), dtype, array->data(), values.size());
  return std::move(array).value();
}

inline HostArray make_array(DataType dtype, const std::vector<double>& values) {
  return make_array(dtype, Dims{static_cast<int64_t>(values.size())}, values);
}

}  // namespace tensoracle::testing
