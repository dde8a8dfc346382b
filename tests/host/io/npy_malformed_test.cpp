// A corpus of malformed .npy files: each must be rejected with a clean error naming the file and
// the problem.
#include <gtest/gtest.h>

#include "io_test_support.h"
#include "tensoracle/npy.h"

namespace tensoracle {
namespace {

// magic, version, header length, dict, then `data`; version 1 unless told otherwise.
std::string npy_bytes(const std::string& dict, const std::string& data = "", int major = 1) {
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  const size_t length = dict.size();
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i) out += static_cast<char>((length >> (8 * i)) & 0xFF);
  return out + dict + data;
}

std::string dict(const std::string& descr, const std::string& shape, const std::string& order = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + order + ", 'shape': " + shape + ", }\n";
}

// "(1, 1, ..., 1, )" with `rank` ones.
std::string many_ones(int rank) {
  std::string out = "(";
  for (int i = 0; i < rank; ++i) out += "1, ";
  return out + ")";
}

struct Malformed {
  const char* label;
  std::string bytes;
  StatusCode code;
  std::string expected;
};

std::vector<Malformed> corpus() {
  const auto corrupt = StatusCode::kCorruptData;
  const auto unsupported = StatusCode::kUnsupported;
  return {
      {"empty", "", corrupt, "not an .npy file"},
      {"wrong magic", "\x93NUMPZ\x01\x00\x00\x00", corrupt, "not an .npy file"},
      {"truncated length", std::string("\x93NUMPY\x01\x00\x05", 9), corrupt, "ends inside the header length"},
      {"version 4", npy_bytes(dict("<f4", "()"), "abcd", 4), unsupported, "npy format version 4.0"},
      {"version 1.1", std::string("\x93NUMPY\x01\x01\x00\x00", 10), unsupported, "npy format version 1.1"},
      {"header length past the end", std::string("\x93NUMPY\x01\x00\xff\x00{}", 12), corrupt,
       "runs past the end of the data"},
      {"header length over the limit", std::string("\x93NUMPY\x02\x00\x00\x00\x00\x01", 12), corrupt,
       "exceeds the limit"},
      {"not a dict", npy_bytes("[1, 2]\n"), corrupt, "expected '{'"},
      {"unterminated dict", npy_bytes("{'descr': '<f4'"), corrupt, "expected ',' or '}'"},
      {"unterminated string", npy_bytes("{'descr: 1}"), corrupt, "closing quote"},
      {"missing shape", npy_bytes("{'descr': '<f4', 'fortran_order': False}"), corrupt, "no 'shape'"},
      {"missing descr", npy_bytes("{'shape': (), 'fortran_order': False}"), corrupt, "no 'descr'"},
      {"unknown key", npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}"), corrupt,
       "unknown key 'x'"},
      {"duplicate key", npy_bytes("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}"), corrupt,
       "the key 'descr' twice"},
      {"fortran_order not a bool", npy_bytes(dict("<f4", "()", "0"), "abcd"), corrupt, "True or False"},
      {"shape a list", npy_bytes(dict("<f4", "[2]"), "abcdefgh"), corrupt, "expected '('"},
      {"shape an int in parentheses", npy_bytes(dict("<f4", "(2)"), "abcdefgh"), corrupt, "'shape' is not a tuple"},
      {"negative dimension", npy_bytes(dict("<f4", "(-2,)")), corrupt, "a non-negative integer in 'shape'"},
      {"dimension beyond int64", npy_bytes(dict("|u1", "(99999999999999999999,)")), corrupt, "beyond the int64 range"},
      {"element count overflow", npy_bytes(dict("|u1", "(4294967296, 4294967296)")), corrupt, "too large"},
      {"byte count overflow", npy_bytes(dict("<f8", "(4611686018427387904,)")), corrupt, "too large"},
      {"too many dimensions", npy_bytes(dict("|u1", many_ones(100))), corrupt, "too many dimensions"},
      {"structured dtype", npy_bytes("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': ()}"), unsupported,
       "structured dtypes"},
      {"complex dtype", npy_bytes(dict("<c8", "()"), "abcdefgh"), unsupported, "unsupported dtype descriptor '<c8'"},
      {"object dtype", npy_bytes(dict("|O", "()"), "abcdefgh"), unsupported, "unsupported dtype descriptor '|O'"},
      {"np.save of bfloat16", npy_bytes(dict("<V2", "()"), "ab"), unsupported, "np.save stores ml_dtypes arrays"},
      {"ml_dtypes name with byte order", npy_bytes(dict("<bfloat16", "()"), "ab"), unsupported,
       "unsupported dtype descriptor '<bfloat16'"},
      {"string with escapes", npy_bytes("{'descr': '<f\\x34', 'fortran_order': False, 'shape': ()}"), corrupt,
       "escapes"},
      {"data too short", npy_bytes(dict("<f4", "(2, 2)"), "abcdefgh"), corrupt, "needs 16 data bytes, but 8 follow"},
      {"data too long", npy_bytes(dict("<f4", "(1,)"), "abcdefgh"), corrupt, "needs 4 data bytes, but 8 follow"},
      {"trailing text after the dict", npy_bytes(dict("<f4", "()") + "x", "abcd"), corrupt, "the end of the header"},
  };
}

TEST(NpyMalformed, EveryCorpusFileGivesACleanError) {
  testing::TempDir dir;
  int index = 0;
  for (const auto& malformed : corpus()) {
    SCOPED_TRACE(malformed.label);
    const std::string path = dir.file("case" + std::to_string(index++) + ".npy");
    testing::write_bytes(path, malformed.bytes);
    auto array = read_npy(path);
    ASSERT_FALSE(array.is_ok());
    EXPECT_EQ(array.status().code(), malformed.code) << array.status().to_string();
    EXPECT_NE(array.status().message().find(path), std::string::npos) << array.status().message();
    EXPECT_NE(array.status().message().find(malformed.expected), std::string::npos) << array.status().message();
  }
}

TEST(NpyMalformed, ParsingFromMemoryNamesTheSource) {
  auto array = parse_npy("junk", 4, "reference 'logits'");
  ASSERT_FALSE(array.is_ok());
  EXPECT_NE(array.status().message().find("reference 'logits'"), std::string::npos);
}

TEST(NpyMalformed, NumpysPython2LongSuffixIsAccepted) {
  const std::string bytes = npy_bytes(dict("|u1", "(2L, 1L)"), "ab");
  auto array = parse_npy(bytes.data(), bytes.size(), "old");
  ASSERT_TRUE(array.is_ok()) << array.status().to_string();
  EXPECT_EQ(array->shape(), (Dims{2, 1}));
}

}  // namespace
}  // namespace tensoracle
