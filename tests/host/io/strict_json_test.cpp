// parse_strict_json: nlohmann's parser plus duplicate-key and depth checks.
#include "io/strict_json.h"

#include <gtest/gtest.h>

namespace tensoracle {
namespace {

std::string message_of(std::string_view text, int max_depth = 64) {
  auto parsed = parse_strict_json(text, "test.json", max_depth);
  if (parsed.is_ok()) return "";
  EXPECT_EQ(parsed.status().code(), StatusCode::kCorruptData);
  EXPECT_NE(parsed.status().message().find("'test.json'"), std::string::npos);
  return parsed.status().message();
}

TEST(StrictJson, ParsesOrdinaryJson) {
  auto parsed = parse_strict_json(R"({"a": [1, {"b": "c"}], "d": {"a": 2}})", "test.json");
  ASSERT_TRUE(parsed.is_ok()) << parsed.status().to_string();
  EXPECT_EQ((*parsed)["a"][1]["b"], "c");
  EXPECT_EQ(json_type_name((*parsed)["d"]), "object");
  EXPECT_EQ(json_type_name((*parsed)["a"]), "array");
}

TEST(StrictJson, RejectsDuplicateKeysAtAnyDepth) {
  EXPECT_NE(message_of(R"({"a": 1, "a": 2})").find("duplicate key 'a'"), std::string::npos);
  EXPECT_NE(message_of(R"({"x": [{"k": 1, "k": 1}]})").find("duplicate key 'k'"), std::string::npos);
  EXPECT_EQ(message_of(R"({"k": {"k": 1}, "j": {"k": 2}})"), "");  // same key in different objects
}

TEST(StrictJson, BoundsNesting) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_NE(message_of(deep).find("deeper than 64 levels"), std::string::npos);
  EXPECT_EQ(message_of("[[[]]]", 3), "");
  EXPECT_NE(message_of("[[[[]]]]", 3).find("deeper than 3 levels"), std::string::npos);
}

TEST(StrictJson, RejectsInvalidUtf8NulBytesAndTrailingText) {
  EXPECT_NE(message_of("{\"a\": \"\xff\"}").find("invalid JSON"), std::string::npos);
  EXPECT_NE(message_of(std::string("{}\0{}", 5)).find("NUL byte at offset 2"), std::string::npos);
  EXPECT_NE(message_of("{} {}").find("invalid JSON"), std::string::npos);
}

}  // namespace
}  // namespace tensoracle
