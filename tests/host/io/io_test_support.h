// Shared helpers for the file-format tests: temporary directories, hand-built files, and checks
// against what the reference libraries (numpy, ml_dtypes, safetensors) wrote or read.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tensoracle/array.h"
#include "tensoracle/float_formats.h"
#include "tensoracle/hashing.h"

namespace tensoracle::testing {

// A fresh directory, removed with everything in it when the object dies.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr ? base : "/tmp") + "/tensoracle-io-XXXXXX";
    path_ = ::mkdtemp(pattern.data()) != nullptr ? pattern : "";
    EXPECT_FALSE(path_.empty()) << "mkdtemp failed";
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The 8-byte little-endian header length, the header, then the data region.
inline std::string safetensors_bytes(const std::string& header, const std::string& data = "") {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((static_cast<uint64_t>(header.size()) >> (8 * i)) & 0xFF);
  return out + header + data;
}

inline std::string fixture(const std::string& relative) {
  return std::string(TENSORACLE_FIXTURES_DIR) + "/io/" + relative;
}

// tests/fixtures/io/expected.json: per fixture file, per array, what its writer stored.
inline const nlohmann::json& expected_fixtures() {
  static const nlohmann::json expected = nlohmann::json::parse(read_bytes(fixture("expected.json")));
  return expected;
}

inline std::vector<int64_t> shape_of(const ArrayView& view) { return view.shape.values(); }

// Checks `actual` element by element against the writer's record (see gen-io-fixtures.py).
inline void expect_matches_record(const ArrayView& actual, const nlohmann::json& record) {
  ASSERT_EQ(std::string(data_type_name(actual.dtype)), record.at("dtype").get<std::string>());
  ASSERT_EQ(shape_of(actual), record.at("shape").get<std::vector<int64_t>>());
  const auto& values = record.at("values");
  ASSERT_EQ(static_cast<size_t>(actual.element_count()), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const auto& want = values[i];
    if (actual.dtype == DataType::kUInt64) {
      uint64_t got;
      std::memcpy(&got, static_cast<const uint8_t*>(actual.data) + 8 * i, 8);
      EXPECT_EQ(got, want.get<uint64_t>()) << "element " << i;
    } else if (actual.dtype == DataType::kInt64) {
      int64_t got;
      std::memcpy(&got, static_cast<const uint8_t*>(actual.data) + 8 * i, 8);
      EXPECT_EQ(got, want.get<int64_t>()) << "element " << i;
    } else if (want.is_string()) {
      const double got = load_as_double(actual.dtype, actual.data, i);
      const std::string special = want.get<std::string>();
      if (special == "nan") EXPECT_TRUE(std::isnan(got)) << "element " << i << " is " << got;
      else EXPECT_EQ(got, special == "inf" ? INFINITY : -INFINITY) << "element " << i;
    } else {
      const double got = load_as_double(actual.dtype, actual.data, i);
      const double expected = want.is_boolean() ? want.get<bool>() : want.get<double>();
      EXPECT_EQ(got, expected) << "element " << i;
      EXPECT_EQ(std::signbit(got), std::signbit(expected)) << "element " << i;
    }
  }
}

inline std::string python_path() { return std::string(TENSORACLE_SOURCE_DIR) + "/.venv/bin/python"; }
inline bool have_python() { return std::filesystem::exists(python_path()); }

// What numpy/ml_dtypes/safetensors read from each of `paths` (gen-io-fixtures.py describe), keyed
// by path: per array dtype, shape and the SHA-256 of its little-endian C-order bytes, plus
// safetensors metadata. Null (and a test failure) when they could not read a file.
inline nlohmann::json describe_with_python(const std::vector<std::string>& paths) {
  std::string command = "'" + python_path() + "' '" + std::string(TENSORACLE_SOURCE_DIR) +
                        "/scripts/gen-io-fixtures.py' describe";
  for (const auto& path : paths) command += " '" + path + "'";
  command += " 2>&1";
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return nullptr;
  std::string output;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  const int status = ::pclose(pipe);
  EXPECT_EQ(status, 0) << "the reference libraries could not read the files:\n" << output;
  if (status != 0) return nullptr;
  return nlohmann::json::parse(output);
}

inline nlohmann::json describe_with_python(const std::string& path) {
  const nlohmann::json seen = describe_with_python(std::vector<std::string>{path});
  return seen.is_null() ? seen : seen.at(path);
}

inline std::string sha256_of(const ArrayView& view) { return sha256_hex(view.data, view.byte_size()); }

// Small arrays of every DataType whose bytes are distinct and deterministic.
inline NamedArrays sample_arrays() {
  NamedArrays arrays;
  int64_t rank = 0;
  for (DataType dtype : all_data_types()) {
    Dims shape = rank % 3 == 0 ? Dims{2, 3} : rank % 3 == 1 ? Dims{5} : Dims{1, 2, 2};
    HostArray array = HostArray::zeros(dtype, shape).value();
    auto* bytes = static_cast<uint8_t*>(array.data());
    for (size_t i = 0; i < array.byte_size(); ++i)
      bytes[i] = dtype == DataType::kBool ? (i * 7 + rank) % 2 : static_cast<uint8_t>(i * 37 + rank * 11 + 1);
    arrays.emplace(std::string("t_") + std::string(data_type_name(dtype)), std::move(array));
    ++rank;
  }
  return arrays;
}

}  // namespace tensoracle::testing
