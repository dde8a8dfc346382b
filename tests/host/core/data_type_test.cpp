#include <gtest/gtest.h>

#include "tensoracle/types.h"

namespace tensoracle {
namespace {

TEST(DataType, NamesRoundTripThroughTheParser) {
  for (DataType type : all_data_types()) {
    const auto parsed = parse_data_type(data_type_name(type));
    ASSERT_TRUE(parsed.is_ok()) << data_type_name(type);
    EXPECT_EQ(*parsed, type);
  }
}

TEST(DataType, AcceptsCommonAliasesCaseInsensitively) {
  EXPECT_EQ(*parse_data_type("Float16"), DataType::kFloat16);
  EXPECT_EQ(*parse_data_type("bfloat16"), DataType::kBFloat16);
  EXPECT_EQ(*parse_data_type("float8_e4m3fn"), DataType::kFloat8E4M3);
}

TEST(DataType, UnknownNameListsTheAcceptedOnes) {
  const auto parsed = parse_data_type("fp12");
  ASSERT_FALSE(parsed.is_ok());
  EXPECT_NE(parsed.status().message().find("'fp12'"), std::string::npos);
  EXPECT_NE(parsed.status().message().find("bf16"), std::string::npos);
}

TEST(DataType, SizesAndKinds) {
  EXPECT_EQ(data_type_size(DataType::kFloat32), 4u);
  EXPECT_EQ(data_type_size(DataType::kBFloat16), 2u);
  EXPECT_EQ(data_type_size(DataType::kFloat8E5M2), 1u);
  EXPECT_EQ(data_type_size(DataType::kInt64), 8u);
  EXPECT_EQ(data_type_size(DataType::kBool), 1u);
  EXPECT_TRUE(is_floating_point(DataType::kFloat8E4M3));
  EXPECT_TRUE(is_integer(DataType::kUInt8));
  EXPECT_FALSE(is_signed(DataType::kUInt8));
  EXPECT_FALSE(is_integer(DataType::kBool));
}

}  // namespace
}  // namespace tensoracle
