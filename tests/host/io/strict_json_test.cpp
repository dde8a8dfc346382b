// The strict JSON reader (strict_json.h) and typed access to what it read (json_field.h).
#include "io/strict_json.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "core/quoted.h"

namespace tensoracle {
namespace {

std::string message_of(std::string_view text, int max_depth = kMaxJsonDepth) {
  auto parsed = parse_strict_json(text, "test.json", max_depth);
  if (parsed.is_ok()) return "";
  EXPECT_EQ(parsed.status().code(), StatusCode::kCorruptData);
  EXPECT_EQ(parsed.status().message().rfind("test.json: ", 0), 0u) << parsed.status().message();
  return parsed.status().message();
}

TEST(StrictJson, ParsesOrdinaryJson) {
  auto parsed = parse_strict_json(R"({"a": [1, {"b": "c"}], "d": {"a": 2}, "e": -3.5, "f": null})", "test.json");
  ASSERT_TRUE(parsed.is_ok()) << parsed.status().to_string();
  EXPECT_EQ((*parsed)["a"][1]["b"], "c");
  EXPECT_EQ((*parsed)["e"], -3.5);
  EXPECT_EQ(json_type_name((*parsed)["d"]), "object");
  EXPECT_EQ(json_type_name((*parsed)["a"]), "array");
  EXPECT_EQ(*parse_strict_json("17", "t"), 17);
  EXPECT_EQ(*parse_strict_json("[]", "t"), nlohmann::json::array());
}

TEST(StrictJson, RejectsDuplicateKeysAtAnyDepthNamingWhere) {
  EXPECT_EQ(message_of(R"({"a": 1, "a": 2})"), "test.json: /a: duplicate key 'a'");
  EXPECT_EQ(message_of(R"({"x": [5, {"k": 1, "k": 1}]})"), "test.json: /x/1/k: duplicate key 'k'");
  EXPECT_EQ(message_of(R"({"k": {"k": 1}, "j": {"k": 2}})"), "");  // same key in different objects
}

TEST(StrictJson, BoundsNestingWithoutRecursing) {
  // 100,000 and 3,000,000 levels: the parser stops at the limit, whatever the input's depth.
  for (const size_t levels : {size_t{100000}, size_t{3000000}}) {
    EXPECT_NE(message_of(std::string(levels, '[') + std::string(levels, ']')).find("nesting is deeper than 64 levels"),
              std::string::npos);
    std::string objects;
    for (size_t i = 0; i < levels / 8; ++i) objects += "{\"a\":";
    EXPECT_NE(message_of(objects).find("nesting is deeper than 64 levels"), std::string::npos);
  }
  EXPECT_EQ(message_of("[[[]]]", 3), "");
  EXPECT_EQ(message_of("[[[[]]]]", 3), "test.json: /0/0/0: nesting is deeper than 3 levels");
}

TEST(StrictJson, RefusesNumbersThatOverflow) {
  EXPECT_EQ(message_of(R"({"atol": 1e999})"), "test.json: /atol: invalid JSON: number overflow parsing '1e999'");
  EXPECT_NE(message_of("[-1e400]").find("number overflow"), std::string::npos);
  // Integers beyond 64 bits become doubles; JsonField refuses them where an integer is expected.
  auto big = parse_strict_json(R"({"n": 18446744073709551616})", "t.json");
  ASSERT_TRUE(big.is_ok());
  EXPECT_EQ(JsonField(*big, "t.json").get_int("n").status().message(),
            "t.json: /n: expected an integer, got 1.8446744073709552e+19, beyond the 64-bit integer range");
  EXPECT_EQ(JsonField(*big, "t.json").get_uint("n").status().message(),
            "t.json: /n: expected an integer >= 0, got 1.8446744073709552e+19, beyond the 64-bit integer range");
}

TEST(StrictJson, RefusesNulBytesRawOrEscapedInStringsAndKeys) {
  EXPECT_EQ(message_of(std::string("{}\0{}", 5)), "test.json: invalid JSON: a NUL byte at byte 2");
  EXPECT_EQ(message_of(R"({"name": "con\u0000v"})"), "test.json: /name: the string 'con\\x00v' holds a NUL byte (\\u0000)");
  EXPECT_EQ(message_of(R"({"a\u0000b": 1})"), "test.json: /a\\x00b: the key 'a\\x00b' holds a NUL byte (\\u0000)");
}

TEST(StrictJson, RejectsInvalidUtf8AndTrailingText) {
  EXPECT_NE(message_of("{\"a\": \"\xff\"}").find("test.json: /a: invalid JSON: parse error"), std::string::npos);
  EXPECT_NE(message_of("{} {}").find("invalid JSON"), std::string::npos);
  EXPECT_NE(message_of("").find("invalid JSON"), std::string::npos);
}

TEST(StrictJson, ErrorCodeIsTheCallersChoice) {
  auto parsed = parse_strict_json("[", "limits.json", kMaxJsonDepth, StatusCode::kInvalidArgument);
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
}

class StrictJsonFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/tensoracle-json-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { (void)std::system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string dir_;
};

TEST_F(StrictJsonFile, ReadsARegularFileAndRefusesOthers) {
  const std::string path = dir_ + "/a.json";
  std::ofstream(path) << R"({"x": 1})";
  auto doc = read_strict_json_file(path, "test file");
  ASSERT_TRUE(doc.is_ok()) << doc.status().to_string();
  EXPECT_EQ((*doc)["x"], 1);

  auto missing = read_strict_json_file(dir_ + "/none.json", "limits file");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("limits file '" + dir_ + "/none.json' does not exist"), std::string::npos);

  // A FIFO would block a plain read forever; it is refused without reading.
  const std::string fifo = dir_ + "/fifo.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto from_fifo = read_strict_json_file(fifo, "limits file");
  EXPECT_FALSE(from_fifo.is_ok());
  EXPECT_NE(from_fifo.status().message().find("is not a regular file"), std::string::npos)
      << from_fifo.status().message();

  auto too_big = read_strict_json_file(path, "test file", StatusCode::kCorruptData, 4);
  EXPECT_NE(too_big.status().message().find("has 8 bytes, more than the 4"), std::string::npos)
      << too_big.status().message();
}

TEST(JsonField, NamesTheSourceAndPointerOfEveryError) {
  const auto doc = *parse_strict_json(
      R"({"layers": [{"name": "conv", "pads": [1, -2], "a/b": "x"}], "n": 1.5, "s": "", "d": [1, -2]})", "e.json");
  const JsonField root(doc, "e.json");
  EXPECT_EQ(root.where(), "e.json");
  auto layers = root.member("layers");
  ASSERT_TRUE(layers.is_ok());
  EXPECT_EQ(*layers->array_size(), 1u);
  const JsonField layer = layers->element(0);
  EXPECT_EQ(layer.pointer(), "/layers/0");
  EXPECT_EQ(*layer.get_name("name"), "conv");
  EXPECT_EQ(layer.get_int("missing").status().message(), "e.json: /layers/0: missing field 'missing'");
  EXPECT_EQ(layer.member("pads")->element(1).as_int(0).status().message(),
            "e.json: /layers/0/pads/1: expected an integer >= 0, got -2");
  EXPECT_EQ(layer.member("a/b")->as_int().status().message(), "e.json: /layers/0/a~1b: expected an integer, got \"x\"");
  EXPECT_EQ(root.get_int("n").status().message(), "e.json: /n: expected an integer, got 1.5");
  EXPECT_EQ(root.get_name("s").status().message(), "e.json: /s: expected a name, got an empty string");
  EXPECT_EQ(root.get_dims("d").status().message(), "e.json: /d/1: expected an integer >= -1, got -2");
  EXPECT_EQ(root.member("layers")->array_size(0).status().message(),
            "e.json: /layers: has 1 elements, more than the limit 0");
  EXPECT_EQ(root.allow_keys({"layers", "n", "s"}).message(), "e.json: unknown key 'd' (known keys: layers, n, s)");
  EXPECT_EQ(layer.get_int("name").status().code(), StatusCode::kCorruptData);
  EXPECT_EQ(JsonField(doc, "l.json", StatusCode::kInvalidArgument).get_int("n").status().code(),
            StatusCode::kInvalidArgument);
}

TEST(JsonField, RangesAndTypes) {
  const auto doc = *parse_strict_json(R"({"i": -5, "u": 7, "f": 0.25, "b": true, "dims": [1, -1, 3]})", "t");
  const JsonField root(doc, "t");
  EXPECT_EQ(*root.get_int("i"), -5);
  EXPECT_EQ(root.get_int("i", 0, 10).status().message(), "t: /i: expected an integer in [0, 10], got -5");
  EXPECT_EQ(root.get_int("u", 0, 5).status().message(), "t: /u: expected an integer in [0, 5], got 7");
  EXPECT_EQ(*root.get_uint("u"), 7u);
  EXPECT_EQ(root.get_uint("i").status().message(), "t: /i: expected an integer >= 0, got -5");
  EXPECT_EQ(*root.get_number("f"), 0.25);
  EXPECT_EQ(*root.get_number("u"), 7.0);
  EXPECT_EQ(root.member("f")->as_number(1.0).status().message(), "t: /f: expected a number >= 1, got 0.25");
  EXPECT_TRUE(*root.get_bool("b"));
  EXPECT_EQ(root.get_bool("u").status().message(), "t: /u: expected true or false, got 7");
  EXPECT_EQ(*root.get_dims("dims"), Dims({1, -1, 3}));
  auto deep = parse_strict_json("[1,2,3,4,5,6,7,8,9]", "t");
  EXPECT_EQ(JsonField(*deep, "t").as_dims().status().message(), "t: has rank 9, more than the maximum 8");
  auto optional = root.optional_member("nope");
  ASSERT_TRUE(optional.is_ok());
  EXPECT_FALSE(optional->has_value());
  EXPECT_EQ(root.member("i")->optional_member("x").status().message(), "t: /i: expected an object, got -5");
}

TEST(JsonField, ShowsLongOrHostileValuesShortAndPrintable) {
  nlohmann::json doc = {{"v", std::string(200, 'x')}, {"w", std::string("a\x1b[2Jb")}};
  const JsonField root(doc, "t");
  const std::string message = root.get_int("v").status().message();
  EXPECT_LT(message.size(), 120u) << message;
  EXPECT_NE(message.find("..."), std::string::npos);
  EXPECT_EQ(root.get_int("w").status().message(), "t: /w: expected an integer, got \"a\\\\u001b[2Jb\"");
}

TEST(Quote, EscapesBytesThatWouldCutOrRewriteAMessage) {
  EXPECT_EQ(quote("conv.weight"), "'conv.weight'");
  EXPECT_EQ(quote(std::string("a\0b", 3)), "'a\\x00b'");
  EXPECT_EQ(quote("it's\\"), "'it\\'s\\\\'");
  EXPECT_EQ(quote("\x1b[31m\x7f"), "'\\x1b[31m\\x7f'");
  EXPECT_EQ(quote("Gewicht \xc3\xa4"), "'Gewicht \xc3\xa4'");  // UTF-8 stays readable
  EXPECT_TRUE(has_nul(std::string("a\0", 2)));
  EXPECT_FALSE(has_nul("a"));
}

}  // namespace
}  // namespace tensoracle
