// .npz archives: numpy's stored and deflated archives, round trips, numpy reading ours, and
// broken archives.
#include <gtest/gtest.h>

#include "io_test_support.h"
#include "tensoracle/npy.h"

namespace tensoracle {
namespace {

using testing::expect_matches_record;
using testing::expected_fixtures;
using testing::fixture;
using testing::TempDir;

TEST(ReadNpz, ReadsStoredAndDeflatedArchivesFromNumpy) {
  for (const char* path : {"npy/stored.npz", "npy/deflated.npz"}) {
    SCOPED_TRACE(path);
    auto arrays = read_npz(fixture(path));
    ASSERT_TRUE(arrays.is_ok()) << arrays.status().to_string();
    const auto& records = expected_fixtures().at(path);
    ASSERT_EQ(arrays->size(), records.size());
    for (const auto& [name, record] : records.items()) {
      SCOPED_TRACE(name);
      ASSERT_EQ(arrays->count(name), 1u);
      expect_matches_record(arrays->at(name).view(), record);
    }
  }
}

TEST(WriteNpz, RoundTripsStoredAndCompressed) {
  TempDir dir;
  const NamedArrays arrays = testing::sample_arrays();
  for (bool compress : {false, true}) {
    const std::string path = dir.file(compress ? "c.npz" : "s.npz");
    ASSERT_TRUE(write_npz(path, views_of(arrays), compress).is_ok());
    auto back = read_npz(path);
    ASSERT_TRUE(back.is_ok()) << back.status().to_string();
    ASSERT_EQ(back->size(), arrays.size());
    for (const auto& [name, array] : arrays) {
      EXPECT_EQ(back->at(name).dtype(), array.dtype()) << name;
      EXPECT_EQ(back->at(name).shape(), array.shape()) << name;
      EXPECT_EQ(testing::sha256_of(back->at(name).view()), testing::sha256_of(array.view())) << name;
    }
  }
}

TEST(WriteNpz, SameArraysGiveTheSameBytes) {
  TempDir dir;
  const NamedArrays arrays = testing::sample_arrays();
  ASSERT_TRUE(write_npz(dir.file("a.npz"), views_of(arrays), true).is_ok());
  ASSERT_TRUE(write_npz(dir.file("b.npz"), views_of(arrays), true).is_ok());
  EXPECT_EQ(testing::read_bytes(dir.file("a.npz")), testing::read_bytes(dir.file("b.npz")));
}

TEST(WriteNpz, NumpyReadsOurArchives) {
  if (!testing::have_python()) GTEST_SKIP() << "no project venv (.venv); run scripts/setup";
  TempDir dir;
  NamedArrays arrays = testing::sample_arrays();
  arrays.emplace("group/nested", HostArray::zeros(DataType::kInt32, Dims{0}).value());
  const std::vector<std::string> paths = {dir.file("stored.npz"), dir.file("compressed.npz")};
  ASSERT_TRUE(write_npz(paths[0], views_of(arrays), false).is_ok());
  ASSERT_TRUE(write_npz(paths[1], views_of(arrays), true).is_ok());
  const nlohmann::json seen = testing::describe_with_python(paths);
  ASSERT_FALSE(seen.is_null());
  for (const auto& path : paths) {
    SCOPED_TRACE(path);
    ASSERT_EQ(seen.at(path).at("arrays").size(), arrays.size());
    for (const auto& [name, array] : arrays) {
      const auto& entry = seen.at(path).at("arrays").at(name);
      EXPECT_EQ(entry.at("dtype"), data_type_name(array.dtype())) << name;
      EXPECT_EQ(entry.at("shape").get<std::vector<int64_t>>(), array.shape().values()) << name;
      EXPECT_EQ(entry.at("sha256"), testing::sha256_of(array.view())) << name;
    }
  }
}

TEST(WriteNpz, RejectsAnEmptyNameAndWritesNothing) {
  TempDir dir;
  HostArray array = HostArray::zeros(DataType::kUInt8, Dims{1}).value();
  Status status = write_npz(dir.file("x.npz"), {{"", array.view()}});
  ASSERT_FALSE(status.is_ok());
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(ReadNpz, BrokenArchivesGiveCleanErrors) {
  TempDir dir;
  const std::string good = testing::read_bytes(fixture("npy/stored.npz"));
  const std::string deflated = testing::read_bytes(fixture("npy/deflated.npz"));
  // Flip one byte inside the first stored entry's array data: the CRC no longer matches.
  std::string bad_crc = good;
  bad_crc[good.find("NUMPY") + 130] ^= 0x55;
  const std::vector<std::tuple<const char*, std::string, std::string>> cases = {
      {"not a zip", "hello", "not a valid .npz"},
      {"empty file", "", "not a valid .npz"},
      {"truncated", good.substr(0, good.size() / 2), "not a valid .npz"},
      {"truncated deflated", deflated.substr(0, deflated.size() - 30), "not a valid .npz"},
      {"corrupt entry", bad_crc, "CRC"},
  };
  for (const auto& [label, bytes, expected] : cases) {
    SCOPED_TRACE(label);
    const std::string path = dir.file(std::string(label) + ".npz");
    testing::write_bytes(path, bytes);
    auto arrays = read_npz(path);
    ASSERT_FALSE(arrays.is_ok());
    EXPECT_EQ(arrays.status().code(), StatusCode::kCorruptData);
    EXPECT_NE(arrays.status().message().find(path), std::string::npos) << arrays.status().message();
    EXPECT_NE(arrays.status().message().find(expected), std::string::npos) << arrays.status().message();
  }
}

TEST(ReadNpz, RejectsEntriesThatAreNotNpy) {
  if (!testing::have_python()) GTEST_SKIP() << "no project venv (.venv); run scripts/setup";
  TempDir dir;
  const std::string path = dir.file("odd.npz");
  const std::string command = "'" + testing::python_path() + "' -c \"import zipfile; z = zipfile.ZipFile('" + path +
                              "', 'w'); z.writestr('notes.txt', 'hi'); z.close()\"";
  ASSERT_EQ(std::system(command.c_str()), 0);
  auto arrays = read_npz(path);
  ASSERT_FALSE(arrays.is_ok());
  EXPECT_NE(arrays.status().message().find("entry 'notes.txt' is not an .npy file"), std::string::npos)
      << arrays.status().message();
}

TEST(ReadNpz, MissingFileIsNotFound) {
  auto arrays = read_npz(fixture("npy/missing.npz"));
  ASSERT_FALSE(arrays.is_ok());
  EXPECT_EQ(arrays.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace tensoracle
