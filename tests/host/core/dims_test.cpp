#include <gtest/gtest.h>

#include <limits>

#include "tensoracle/types.h"

namespace tensoracle {
namespace {

TEST(Dims, CountsElements) {
  EXPECT_EQ(*Dims{}.element_count(), 1);
  EXPECT_EQ(*Dims({2, 3, 4}).element_count(), 24);
  EXPECT_EQ(*Dims({2, 0, 4}).element_count(), 0);
  EXPECT_EQ(*Dims({2, 3}).byte_size(DataType::kFloat16), 12);
}

TEST(Dims, RejectsDynamicAndNegativeDimensionsByIndex) {
  const auto dynamic = Dims({2, -1}).element_count();
  ASSERT_FALSE(dynamic.is_ok());
  EXPECT_NE(dynamic.status().message().find("dynamic dimension at index 1"), std::string::npos);
  EXPECT_FALSE(Dims({-5}).element_count().is_ok());
  EXPECT_FALSE(Dims({2, -1}).is_static());
}

TEST(Dims, DetectsOverflowInsteadOfWrapping) {
  const int64_t big = int64_t{1} << 32;
  EXPECT_FALSE(Dims({big, big}).element_count().is_ok());
  EXPECT_TRUE(Dims({big, big / 4}).element_count().is_ok());
  EXPECT_FALSE(Dims({big, big / 4}).byte_size(DataType::kFloat64).is_ok());
  EXPECT_FALSE(checked_mul(std::numeric_limits<int64_t>::max(), 2).has_value());
  EXPECT_FALSE(checked_add(std::numeric_limits<int64_t>::max(), 1).has_value());
}

TEST(Dims, PrintsCompactly) { EXPECT_EQ(Dims({2, -1, 7}).to_string(), "[2,-1,7]"); }

}  // namespace
}  // namespace tensoracle
