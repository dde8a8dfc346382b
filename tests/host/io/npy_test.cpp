// .npy files: reading what numpy and ml_dtypes wrote, round trips, and numpy reading ours.
#include <gtest/gtest.h>

#include "io_test_support.h"
#include "tensoracle/npy.h"
#include "tensoracle/safetensors.h"

namespace tensoracle {
namespace {

using testing::expect_matches_record;
using testing::expected_fixtures;
using testing::fixture;
using testing::TempDir;

TEST(ReadNpy, ReadsEveryFixtureAsNumpyWroteIt) {
  // Every dtype (ml_dtypes' bfloat16/float8 by descr name), big-endian, Fortran order, versions
  // 2.0 and 3.0, a scalar and an empty array.
  int checked = 0;
  for (const auto& [path, arrays] : expected_fixtures().items()) {
    if (path.size() < 4 || path.compare(path.size() - 4, 4, ".npy") != 0) continue;
    SCOPED_TRACE(path);
    auto array = read_npy(fixture(path));
    ASSERT_TRUE(array.is_ok()) << array.status().to_string();
    ASSERT_EQ(arrays.size(), 1u);
    expect_matches_record(array->view(), arrays.begin().value());
    ++checked;
  }
  EXPECT_GE(checked, 25);
}

TEST(WriteNpy, RoundTripsEveryDataType) {
  TempDir dir;
  for (const auto& [name, array] : testing::sample_arrays()) {
    SCOPED_TRACE(name);
    const std::string path = dir.file(name + ".npy");
    ASSERT_TRUE(write_npy(path, array.view()).is_ok());
    auto back = read_npy(path);
    ASSERT_TRUE(back.is_ok()) << back.status().to_string();
    EXPECT_EQ(back->dtype(), array.dtype());
    EXPECT_EQ(back->shape(), array.shape());
    EXPECT_EQ(testing::sha256_of(back->view()), testing::sha256_of(array.view()));
  }
}

TEST(WriteNpy, StartsTheDataOnA64ByteBoundaryLikeNumpy) {
  TempDir dir;
  HostArray array = HostArray::zeros(DataType::kFloat32, Dims{3, 1, 4}).value();
  const std::string path = dir.file("a.npy");
  ASSERT_TRUE(write_npy(path, array.view()).is_ok());
  const std::string bytes = testing::read_bytes(path);
  EXPECT_EQ((bytes.size() - array.byte_size()) % 64, 0u);
  EXPECT_EQ(bytes[bytes.size() - array.byte_size() - 1], '\n');
}

TEST(WriteNpy, NumpyReadsOurFiles) {
  if (!testing::have_python()) GTEST_SKIP() << "no project venv (.venv); run scripts/setup";
  TempDir dir;
  NamedArrays arrays = testing::sample_arrays();
  arrays.emplace("scalar", HostArray::zeros(DataType::kInt16, Dims{}).value());
  arrays.emplace("empty", HostArray::zeros(DataType::kFloat16, Dims{2, 0}).value());
  std::vector<std::string> paths;
  for (const auto& [name, array] : arrays) {
    paths.push_back(dir.file(name + ".npy"));
    ASSERT_TRUE(write_npy(paths.back(), array.view()).is_ok()) << name;
  }
  const nlohmann::json seen = testing::describe_with_python(paths);
  ASSERT_FALSE(seen.is_null());
  for (const auto& [name, array] : arrays) {
    SCOPED_TRACE(name);
    const auto& entry = seen.at(dir.file(name + ".npy")).at("arrays").at(name);
    EXPECT_EQ(entry.at("dtype"), data_type_name(array.dtype()));
    EXPECT_EQ(entry.at("shape").get<std::vector<int64_t>>(), array.shape().values());
    EXPECT_EQ(entry.at("sha256"), testing::sha256_of(array.view()));
  }
}

TEST(WriteNpy, RejectsAViewWithoutData) {
  TempDir dir;
  Status status = write_npy(dir.file("x.npy"), ArrayView{DataType::kFloat32, Dims{4}, nullptr});
  ASSERT_FALSE(status.is_ok());
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(ReadNamedArrays, ChoosesTheReaderByExtension) {
  auto npy = read_named_arrays(fixture("npy/fp32.npy"));
  ASSERT_TRUE(npy.is_ok()) << npy.status().to_string();
  ASSERT_EQ(npy->size(), 1u);
  EXPECT_EQ(npy->begin()->first, "fp32");  // named after the file stem

  auto npz = read_named_arrays(fixture("npy/deflated.npz"));
  ASSERT_TRUE(npz.is_ok()) << npz.status().to_string();
  EXPECT_EQ(npz->size(), expected_fixtures().at("npy/deflated.npz").size());

  const std::string safetensors_path = "safetensors/all_dtypes.safetensors";
  auto tensors = read_named_arrays(fixture(safetensors_path));
  ASSERT_TRUE(tensors.is_ok()) << tensors.status().to_string();
  for (const auto& [name, record] : expected_fixtures().at(safetensors_path).items()) {
    SCOPED_TRACE(name);
    expect_matches_record(tensors->at(name).view(), record);
  }
}

TEST(ReadNamedArrays, NamesTheAcceptedExtensions) {
  auto arrays = read_named_arrays(fixture("expected.json"));
  ASSERT_FALSE(arrays.is_ok());
  EXPECT_EQ(arrays.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(arrays.status().message().find("expected.json"), std::string::npos);
  EXPECT_NE(arrays.status().message().find(".npy, .npz or .safetensors"), std::string::npos);
}

}  // namespace
}  // namespace tensoracle
