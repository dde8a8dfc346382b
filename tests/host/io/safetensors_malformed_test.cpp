// A corpus of malformed safetensors files and sharded indexes: each must be rejected with a clean
// error that names the file and says what is wrong.
#include <gtest/gtest.h>

#include "io_test_support.h"
#include "tensoracle/safetensors.h"

namespace tensoracle {
namespace {

using testing::safetensors_bytes;
using testing::TempDir;
using testing::write_bytes;

struct Malformed {
  const char* label;
  std::string bytes;
  std::string expected;  // a piece of the error message
};

std::string le64(uint64_t value) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((value >> (8 * i)) & 0xFF);
  return out;
}

std::string tensor(const std::string& name, const std::string& dtype, const std::string& shape,
                   const std::string& offsets) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape + ",\"data_offsets\":" + offsets + "}";
}

std::string nested(const std::string& open, const std::string& close, int depth) {
  std::string out;
  for (int i = 0; i < depth; ++i) out += open;
  for (int i = 0; i < depth; ++i) out += close;
  return out;
}

std::vector<Malformed> corpus() {
  const std::string eight(8, 'x');
  const std::string good = tensor("w", "F32", "[2]", "[0,8]");
  return {
      {"empty file", "", "fewer than the 8-byte header length"},
      {"truncated length", std::string(5, '\0'), "fewer than the 8-byte header length"},
      {"header length over the limit", le64(100'000'001) + "{}", "exceeds the limit of 100000000 bytes"},
      {"header length past the end", le64(64) + "{}", "runs past the end of the file"},
      {"header length of 2^64-1", le64(~0ull) + "{}", "exceeds the limit"},
      {"zero header length", le64(0), "does not start with '{'"},
      {"header not an object", safetensors_bytes("[]"), "does not start with '{'"},
      {"truncated JSON", safetensors_bytes("{\"w\":{\"dtype\":"), "not valid JSON"},
      {"trailing garbage", safetensors_bytes("{} x"), "not valid JSON"},
      {"NUL padding", safetensors_bytes(std::string("{}") + std::string(1, '\0') + "garbage"), "a NUL byte at header offset 2"},
      {"non-UTF-8 name", safetensors_bytes("{\"\xff\xfe\":{}}"), "UTF-8"},
      {"non-UTF-8 metadata", safetensors_bytes("{\"__metadata__\":{\"k\":\"\xc3(\"}}"), "UTF-8"},
      {"deep object nesting", safetensors_bytes("{\"w\":" + nested("{\"a\":", "}", 100000) + "}"),
       "tensor 'w': unknown field 'a'"},
      {"deep array nesting", safetensors_bytes("{\"w\":" + nested("[", "]", 100000) + "}"),
       "tensor 'w': the entry must be an object, got an array"},
      {"deep nesting in metadata", safetensors_bytes("{\"__metadata__\":{\"k\":" + nested("[", "]", 100000) + "}}"),
       "the value of 'k' must be a string, got an array"},
      {"entry not an object", safetensors_bytes("{\"w\":5}"), "tensor 'w': the entry must be an object, got a number"},
      {"duplicate tensor", safetensors_bytes("{" + good + "," + tensor("w", "F32", "[2]", "[8,16]") + "}", eight + eight),
       "tensor 'w' appears twice"},
      {"duplicate field", safetensors_bytes("{\"w\":{\"dtype\":\"F32\",\"dtype\":\"F32\"}}"),
       "tensor 'w': field 'dtype' appears twice"},
      {"unknown field", safetensors_bytes("{\"w\":{\"dtype\":\"F32\",\"extra\":1}}"), "tensor 'w': unknown field 'extra'"},
      {"missing field", safetensors_bytes("{\"w\":{\"dtype\":\"F32\",\"data_offsets\":[0,0]}}"),
       "tensor 'w': missing field 'shape'"},
      {"bad dtype", safetensors_bytes("{" + tensor("w", "F4", "[2]", "[0,1]") + "}", "x"),
       "tensor 'w': field 'dtype': unknown safetensors dtype 'F4'"},
      {"lower-case dtype", safetensors_bytes("{" + tensor("w", "f32", "[2]", "[0,8]") + "}", eight),
       "unknown safetensors dtype 'f32'"},
      {"dtype not a string", safetensors_bytes("{\"w\":{\"dtype\":32}}"), "field 'dtype' must be a string, got a number"},
      {"shape not an array", safetensors_bytes("{\"w\":{\"dtype\":\"F32\",\"shape\":\"2\"}}"),
       "field 'shape' must be an array of non-negative integers, got a string"},
      {"negative dimension", safetensors_bytes("{" + tensor("w", "F32", "[-1]", "[0,4]") + "}", "xxxx"),
       "field 'shape' holds the negative value -1"},
      {"fractional dimension", safetensors_bytes("{" + tensor("w", "F32", "[1.5]", "[0,4]") + "}", "xxxx"),
       "field 'shape' must hold non-negative integers, got a non-integer number"},
      {"dimension beyond int64", safetensors_bytes("{" + tensor("w", "U8", "[9223372036854775808]", "[0,1]") + "}", "x"),
       "beyond the int64 range"},
      {"dimension beyond uint64", safetensors_bytes("{" + tensor("w", "U8", "[100000000000000000000]", "[0,1]") + "}", "x"),
       "got a non-integer number"},
      {"element count overflow",
       safetensors_bytes("{" + tensor("w", "U8", "[4294967296,4294967296]", "[0,1]") + "}", "x"),
       "more elements than fit in int64"},
      {"byte count overflow", safetensors_bytes("{" + tensor("w", "F64", "[4611686018427387904]", "[0,1]") + "}", "x"),
       "needs more bytes than fit in int64"},
      {"three offsets", safetensors_bytes("{" + tensor("w", "F32", "[2]", "[0,4,8]") + "}", eight),
       "field 'data_offsets' must be [begin, end], got more than 2"},
      {"one offset", safetensors_bytes("{" + tensor("w", "F32", "[2]", "[8]") + "}", eight),
       "field 'data_offsets' must be [begin, end], got 1 values"},
      {"end before begin", safetensors_bytes("{" + tensor("w", "F32", "[2]", "[8,0]") + "}", eight),
       "ends before it begins"},
      {"size disagrees with shape", safetensors_bytes("{" + tensor("w", "F32", "[2]", "[0,4]") + "}", "xxxx"),
       "tensor 'w': field 'data_offsets' [0, 4] spans 4 bytes, but shape [2] of F32 needs 8"},
      {"offsets past the end", safetensors_bytes("{" + good + "}", "xxxx"), "runs past the end of the data region"},
      {"huge offsets", safetensors_bytes("{" + tensor("w", "U8", "[0]", "[18446744073709551615,18446744073709551615]") + "}"),
       "runs past the end of the data region"},
      {"overlapping tensors",
       safetensors_bytes("{" + good + "," + tensor("v", "F32", "[2]", "[4,12]") + "}", eight + "xxxx"),
       "tensor 'v': field 'data_offsets' [4, 12] overlaps tensor 'w' [0, 8]"},
      {"gap between tensors", safetensors_bytes("{" + good + "," + tensor("v", "U8", "[1]", "[9,10]") + "}", eight + "xx"),
       "leaves the data bytes [8, 9) unused"},
      {"bytes after the last tensor", safetensors_bytes("{" + good + "}", eight + "xx"),
       "the data region has 10 bytes but its tensors cover only the first 8"},
      {"metadata value not a string", safetensors_bytes("{\"__metadata__\":{\"k\":1}}"),
       "'__metadata__': the value of 'k' must be a string, got a number"},
      {"metadata not an object", safetensors_bytes("{\"__metadata__\":[]}"), "'__metadata__' must be an object"},
      {"duplicate metadata key", safetensors_bytes("{\"__metadata__\":{\"k\":\"a\",\"k\":\"b\"}}"),
       "'__metadata__' has the key 'k' twice"},
      {"duplicate metadata", safetensors_bytes("{\"__metadata__\":{},\"__metadata__\":{}}"), "'__metadata__' appears twice"},
      // Names become names in messages and maps: a NUL would cut them short.
      {"NUL in a tensor name", safetensors_bytes("{" + tensor("co\\u0000nv", "F32", "[2]", "[0,8]") + "}", eight),
       "the name 'co\\x00nv' holds a NUL byte"},
      {"NUL in metadata", safetensors_bytes("{\"__metadata__\":{\"k\":\"a\\u0000\"}}"), "the string 'a\\x00' holds a NUL byte"},
  };
}

TEST(SafetensorsMalformed, EveryCorpusFileGivesACleanError) {
  TempDir dir;
  int index = 0;
  for (const auto& malformed : corpus()) {
    SCOPED_TRACE(malformed.label);
    const std::string path = dir.file("case" + std::to_string(index++) + ".safetensors");
    write_bytes(path, malformed.bytes);
    auto file = SafetensorsFile::open(path);
    ASSERT_FALSE(file.is_ok());
    EXPECT_EQ(file.status().code(), StatusCode::kCorruptData);
    EXPECT_NE(file.status().message().find(path), std::string::npos) << file.status().message();
    EXPECT_NE(file.status().message().find(malformed.expected), std::string::npos) << file.status().message();
  }
}

TEST(SafetensorsMalformed, ZeroSizedTensorsMayShareAnOffset) {
  // The reference implementation accepts these; so do we.
  TempDir dir;
  const std::string path = dir.file("zeros.safetensors");
  write_bytes(path, safetensors_bytes("{" + tensor("a", "F32", "[0]", "[0,0]") + "," + tensor("b", "I8", "[0,3]", "[0,0]") +
                                          "," + tensor("c", "U8", "[2]", "[0,2]") + "}",
                                      "xy"));
  auto file = SafetensorsFile::open(path);
  ASSERT_TRUE(file.is_ok()) << file.status().to_string();
  EXPECT_EQ(file->tensors().size(), 3u);
}

// ---- sharded indexes ----

class MalformedIndex : public ::testing::Test {
 protected:
  void SetUp() override {
    write_bytes(dir_.file("a.safetensors"),
                safetensors_bytes("{" + tensor("x", "U8", "[2]", "[0,2]") + "," + tensor("w", "I8", "[1]", "[2,3]") + "}", "abc"));
    write_bytes(dir_.file("b.safetensors"), safetensors_bytes("{" + tensor("y", "U8", "[1]", "[0,1]") + "}", "c"));
  }
  // Opens an index with `json` as its text; returns the error message (empty when it opened).
  std::string open_index(const std::string& json) {
    const std::string path = dir_.file("model.safetensors.index.json");
    write_bytes(path, json);
    auto weights = Weights::open(path);
    if (weights.is_ok()) return "";
    EXPECT_NE(weights.status().message().find(dir_.path()), std::string::npos) << weights.status().message();
    return weights.status().message();
  }
  TempDir dir_;
};

TEST_F(MalformedIndex, AConsistentIndexOpens) {
  EXPECT_EQ(open_index(R"({"metadata": {"total_size": 4}, "weight_map": {"x": "a.safetensors", "w": "a.safetensors",
                                                                     "y": "b.safetensors"}})"),
            "");
}

TEST_F(MalformedIndex, EachInconsistencyIsNamed) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not json", "invalid JSON"},
      {"[]", "the index must be a JSON object, got array"},
      {R"({"metadata": {}})", "missing field 'weight_map'"},
      {R"({"weight_map": []})", "field 'weight_map' must be an object, got array"},
      {R"({"weight_map": {"x": 1}})", "tensor 'x' must map to a file name, got number"},
      {R"({"metadata": 5, "weight_map": {}})", "field 'metadata' must be an object"},
      {R"({"metadata": {"a": {}}, "weight_map": {}})", "the value of 'a' must be a string, number, boolean or null"},
      {R"({"metadata": {"a": "1", "a": "2"}, "weight_map": {}})", "field 'metadata' has the key 'a' twice"},
      {R"({"weight_map": {}, "weight_map": {}})", "the key 'weight_map' appears twice"},
      {R"({"weight_map": {"x": ["a.safetensors"]}})", "tensor 'x' must map to a file name, got array"},
      {R"({"weight_map": {"x": "/etc/a.safetensors"}})", "absolute path '/etc/a.safetensors'"},
      {R"({"weight_map": {"x": "../a.safetensors"}})", "leaves the index's directory"},
      {R"({"weight_map": {"x": "sub/../../a.safetensors"}})", "leaves the index's directory"},
      {R"({"weight_map": {"x": ""}})", "maps to an empty file name"},
      {R"({"weight_map": {"x": "a.safe\u0000tensors"}})", "the string 'a.safe\\x00tensors' holds a NUL byte"},
      {R"({"weight_map": {"x\u0000": "a.safetensors"}})", "the key 'x\\x00' holds a NUL byte"},
      {R"({"weight_map": {"x": "a.safetensors", "x": "b.safetensors"}})", "field 'weight_map' lists tensor 'x' twice"},
      {R"({"weight_map": {"x": "a.safetensors", "y": "c.safetensors"}})", "c.safetensors"},
      {R"({"weight_map": {"x": "a.safetensors", "y": "b.safetensors", "z": "b.safetensors"}})",
       "maps tensor 'z' to 'b.safetensors', which does not contain it"},
      {R"({"weight_map": {"x": "a.safetensors", "w": "a.safetensors"}, "other": [{"x": 1}]})", ""},  // ignored
      {R"({"weight_map": {"x": "a.safetensors"}})", "shard 'a.safetensors' holds tensor 'w', which the index does not list"},
      {R"({"weight_map": {"x": "b.safetensors", "w": "a.safetensors"}})",
       "the index maps tensor 'x' to 'b.safetensors', which does not contain it"},
      {std::string(R"({"weight_map": {}})") + '\0' + "junk", "a NUL byte at offset 18"},
      {R"({"other": )" + nested("[", "]", 100000) + R"(, "weight_map": {}})", "deeper than 64 levels"},
  };
  for (const auto& [json, expected] : cases) {
    SCOPED_TRACE(json.substr(0, 80));
    const std::string message = open_index(json);
    if (expected.empty()) {
      EXPECT_EQ(message, "");
    } else {
      EXPECT_NE(message.find(expected), std::string::npos) << message;
    }
  }
}

TEST_F(MalformedIndex, ATensorInTwoShardsIsRejected) {
  write_bytes(dir_.file("c.safetensors"),
              safetensors_bytes("{" + tensor("x", "U8", "[1]", "[0,1]") + "," + tensor("y", "U8", "[1]", "[1,2]") + "}", "de"));
  const std::string message =
      open_index(R"({"weight_map": {"x": "a.safetensors", "w": "a.safetensors", "y": "c.safetensors"}})");
  EXPECT_NE(message.find("tensor 'x' is in shard 'c.safetensors', but the index maps it to 'a.safetensors'"),
            std::string::npos)
      << message;
}

TEST_F(MalformedIndex, ACorruptShardIsReportedWithItsPath) {
  write_bytes(dir_.file("b.safetensors"), "junk");
  const std::string message =
      open_index(R"({"weight_map": {"x": "a.safetensors", "w": "a.safetensors", "y": "b.safetensors"}})");
  EXPECT_NE(message.find("b.safetensors"), std::string::npos) << message;
  EXPECT_NE(message.find("fewer than the 8-byte header length"), std::string::npos) << message;
}

}  // namespace
}  // namespace tensoracle
