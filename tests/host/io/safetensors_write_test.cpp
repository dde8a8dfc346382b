// Writing safetensors: round trips, layout (alignment, order), atomicity, and that the reference
// implementation reads what we write.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <vector>

#include "core/errors.h"
#include "io_test_support.h"
#include "tensoracle/hashing.h"
#include "tensoracle/safetensors.h"

namespace tensoracle {
namespace {

using testing::TempDir;

TEST(WriteSafetensors, RoundTripsEveryDtypeAndTheMetadata) {
  TempDir dir;
  const NamedArrays arrays = testing::sample_arrays();
  SafetensorsWriteOptions options;
  options.metadata = {{"format", "pt"}, {"note", "\xc3\xa9t\xc3\xa9"}};
  ASSERT_TRUE(write_safetensors(dir.file("w.safetensors"), views_of(arrays), options).is_ok());

  auto file = SafetensorsFile::open(dir.file("w.safetensors"));
  ASSERT_TRUE(file.is_ok()) << file.status().to_string();
  EXPECT_EQ(file->metadata(), options.metadata);
  ASSERT_EQ(file->tensors().size(), arrays.size());
  for (const auto& [name, array] : arrays) {
    auto view = file->view(name);
    ASSERT_TRUE(view.is_ok()) << name;
    EXPECT_EQ(view->dtype, array.dtype()) << name;
    EXPECT_EQ(view->shape, array.shape()) << name;
    EXPECT_EQ(testing::sha256_of(*view), testing::sha256_of(array.view())) << name;
  }
}

TEST(WriteSafetensors, RoundTripsScalarsEmptyTensorsAndAnEmptySet) {
  TempDir dir;
  NamedArrays arrays;
  arrays.emplace("scalar", HostArray::zeros(DataType::kFloat64, Dims{}).value());
  arrays.emplace("empty", HostArray::zeros(DataType::kInt32, Dims{0, 7}).value());
  arrays.at("scalar").data_as<double>()[0] = -2.5;
  ASSERT_TRUE(write_safetensors(dir.file("a.safetensors"), views_of(arrays)).is_ok());
  auto file = SafetensorsFile::open(dir.file("a.safetensors"));
  ASSERT_TRUE(file.is_ok()) << file.status().to_string();
  EXPECT_EQ(file->view("scalar")->shape, Dims{});
  EXPECT_EQ(load_as_double(DataType::kFloat64, file->view("scalar")->data, 0), -2.5);
  EXPECT_EQ(file->view("empty")->shape, (Dims{0, 7}));

  ASSERT_TRUE(write_safetensors(dir.file("none.safetensors"), {}).is_ok());
  auto none = SafetensorsFile::open(dir.file("none.safetensors"));
  ASSERT_TRUE(none.is_ok()) << none.status().to_string();
  EXPECT_TRUE(none->tensors().empty());
}

TEST(WriteSafetensors, AlignsTheDataRegionAndEveryTensorToItsElementSize) {
  TempDir dir;
  const NamedArrays arrays = testing::sample_arrays();
  for (size_t alignment : {1, 8, 64, 4096}) {
    SafetensorsWriteOptions options;
    options.alignment = alignment;
    const std::string path = dir.file("aligned.safetensors");
    ASSERT_TRUE(write_safetensors(path, views_of(arrays), options).is_ok());
    auto file = SafetensorsFile::open(path);
    ASSERT_TRUE(file.is_ok()) << file.status().to_string();
    uint64_t data_bytes = 0;
    for (const auto& info : file->tensors()) data_bytes += info.end - info.begin;
    const uint64_t data_start = file->file_size() - data_bytes;
    EXPECT_EQ(data_start % alignment, 0u) << "alignment " << alignment;
    for (const auto& info : file->tensors()) EXPECT_EQ(info.begin % data_type_size(info.dtype), 0u) << info.name;
  }
}

TEST(WriteSafetensors, RejectsBadInputsAndLeavesNothingBehind) {
  TempDir dir;
  const std::string path = dir.file("bad.safetensors");
  HostArray array = HostArray::zeros(DataType::kFloat32, Dims{2}).value();
  const auto expect_rejected = [&](const NamedArrayViews& tensors, const SafetensorsWriteOptions& options,
                                   const std::string& needle) {
    Status status = write_safetensors(path, tensors, options);
    ASSERT_FALSE(status.is_ok()) << needle;
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(status.message().find(needle), std::string::npos) << status.message();
    EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "a failed write left files behind";
  };
  expect_rejected({{"__metadata__", array.view()}}, {}, "'__metadata__' is reserved");
  expect_rejected({{"bad\xff", array.view()}}, {}, "not valid UTF-8");
  SafetensorsWriteOptions bad_metadata;
  bad_metadata.metadata = {{"key", "\xc3"}};
  expect_rejected({{"x", array.view()}}, bad_metadata, "metadata entry 'key'");
  SafetensorsWriteOptions odd_alignment;
  odd_alignment.alignment = 24;
  expect_rejected({{"x", array.view()}}, odd_alignment, "alignment 24");
  expect_rejected({{"dynamic", ArrayView{DataType::kFloat32, Dims{-1, 2}, array.data()}}}, {}, "tensor 'dynamic'");
  expect_rejected({{"null", ArrayView{DataType::kFloat32, Dims{2}, nullptr}}}, {}, "tensor 'null' has no data");
}

TEST(WriteSafetensors, ReplacesAnExistingFileWhole) {
  TempDir dir;
  const std::string path = dir.file("w.safetensors");
  NamedArrays first = testing::sample_arrays();
  ASSERT_TRUE(write_safetensors(path, views_of(first)).is_ok());
  auto old_mapping = SafetensorsFile::open(path);
  ASSERT_TRUE(old_mapping.is_ok());
  const std::string old_hash = testing::sha256_of(*old_mapping->view("t_fp32"));

  NamedArrays second;
  second.emplace("only", HostArray::zeros(DataType::kUInt8, Dims{3}).value());
  ASSERT_TRUE(write_safetensors(path, views_of(second)).is_ok());
  auto reopened = SafetensorsFile::open(path);
  ASSERT_TRUE(reopened.is_ok());
  EXPECT_EQ(reopened->tensors().size(), 1u);
  // The old file was replaced, not overwritten: the earlier mapping still reads the old bytes.
  EXPECT_EQ(testing::sha256_of(*old_mapping->view("t_fp32")), old_hash);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1) << "temporary file left";
}

TEST(WriteSafetensors, FailsCleanlyWhenTheDirectoryDoesNotExist) {
  TempDir dir;
  Status status = write_safetensors(dir.file("missing/w.safetensors"), views_of(testing::sample_arrays()));
  ASSERT_FALSE(status.is_ok());
  EXPECT_EQ(status.code(), StatusCode::kIoError);
  EXPECT_NE(status.message().find("missing"), std::string::npos) << status.message();
}

// Deferred metadata: the header reserves the value, the value is written after the data; the
// file must be exactly the one written with the value known from the start.
TEST(WriteSafetensors, DeferredMetadataGivesTheBytesOfMetadataKnownUpFront) {
  TempDir dir;
  NamedArrays arrays = testing::sample_arrays();
  // Names and values that contain the writer's reservation fillers must not confuse it.
  arrays.emplace(std::string(64, 'a'), HostArray::zeros(DataType::kUInt8, Dims{2}).value());
  arrays.emplace(std::string(64, 'b'), HostArray::zeros(DataType::kUInt8, Dims{1}).value());
  const std::string digest = to_hex(sha256("deferred"));
  for (size_t alignment : {1, 8, 4096}) {
    SafetensorsWriteOptions up_front;
    up_front.alignment = alignment;
    up_front.metadata = {{"aa", std::string(64, 'a')}, {"source_sha256", digest}, {"zz", "x/y"}};
    ASSERT_TRUE(write_safetensors(dir.file("up_front.safetensors"), views_of(arrays), up_front).is_ok());

    SafetensorsWriteOptions deferred;
    deferred.alignment = alignment;
    deferred.metadata = {{"aa", std::string(64, 'a')}};
    std::vector<std::string> resolved;
    deferred.deferred_metadata["source_sha256"] = {64, [&]() -> Result<std::string> {
                                                     resolved.push_back("source_sha256");
                                                     return digest;
                                                   }};
    deferred.deferred_metadata["zz"] = {3, [&]() -> Result<std::string> {
                                          resolved.push_back("zz");
                                          return std::string("x/y");
                                        }};
    ASSERT_TRUE(write_safetensors(dir.file("deferred.safetensors"), views_of(arrays), deferred).is_ok());
    EXPECT_EQ(resolved, (std::vector<std::string>{"source_sha256", "zz"}));
    EXPECT_EQ(testing::read_bytes(dir.file("deferred.safetensors")), testing::read_bytes(dir.file("up_front.safetensors")))
        << "alignment " << alignment;
  }
}

TEST(WriteSafetensors, AFailingOrMisfitDeferredValueLeavesNothingBehind) {
  TempDir dir;
  const std::string path = dir.file("w.safetensors");
  ASSERT_TRUE(write_safetensors(path, {}).is_ok());
  const std::string old_bytes = testing::read_bytes(path);
  const NamedArrays arrays = testing::sample_arrays();
  auto deferring = [](size_t width, std::function<Result<std::string>()> resolve) {
    SafetensorsWriteOptions options;
    options.deferred_metadata["source_sha256"] = {width, std::move(resolve)};
    return options;
  };
  const std::vector<std::pair<SafetensorsWriteOptions, std::string>> cases = {
      {deferring(64, [] { return Result<std::string>(io_error("the hash thread failed")); }), "the hash thread failed"},
      {deferring(4, [] { return Result<std::string>(std::string("abc")); }), "not 4 printable ASCII"},
      {deferring(4, [] { return Result<std::string>(std::string("ab\"c")); }), "not 4 printable ASCII"},
      {deferring(2, [] { return Result<std::string>(std::string("\xc3\xa9")); }), "not 2 printable ASCII"},
      {deferring(0, [] { return Result<std::string>(std::string()); }), "width of at least 1"},
      {deferring(4, nullptr), "resolve function"},
  };
  for (const auto& [options, expected] : cases) {
    Status status = write_safetensors(path, views_of(arrays), options);
    ASSERT_FALSE(status.is_ok()) << expected;
    EXPECT_NE(status.message().find(expected), std::string::npos) << status.message();
    EXPECT_NE(status.message().find("source_sha256"), std::string::npos) << status.message();
    EXPECT_EQ(testing::read_bytes(path), old_bytes);
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1) << "temporary file left";
  }

  SafetensorsWriteOptions twice = deferring(1, [] { return Result<std::string>(std::string("x")); });
  twice.metadata["source_sha256"] = "x";
  EXPECT_EQ(write_safetensors(path, views_of(arrays), twice).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(testing::read_bytes(path), old_bytes);
}

TEST(WriteSafetensors, TheReferenceImplementationReadsOurFiles) {
  if (!testing::have_python()) GTEST_SKIP() << "no project venv (.venv); run scripts/setup";
  TempDir dir;
  const NamedArrays arrays = testing::sample_arrays();
  SafetensorsWriteOptions options;
  options.metadata = {{"format", "pt"}};
  options.alignment = 64;
  const std::string path = dir.file("ours.safetensors");
  ASSERT_TRUE(write_safetensors(path, views_of(arrays), options).is_ok());

  const nlohmann::json seen = testing::describe_with_python(path);
  ASSERT_FALSE(seen.is_null());
  EXPECT_EQ(seen.at("metadata"), nlohmann::json(options.metadata));
  ASSERT_EQ(seen.at("arrays").size(), arrays.size());
  for (const auto& [name, array] : arrays) {
    const auto& entry = seen.at("arrays").at(name);
    EXPECT_EQ(entry.at("dtype"), safetensors_dtype_name(array.dtype())) << name;
    EXPECT_EQ(entry.at("shape").get<std::vector<int64_t>>(), array.shape().values()) << name;
    EXPECT_EQ(entry.at("sha256"), testing::sha256_of(array.view())) << name;
  }
}

}  // namespace
}  // namespace tensoracle
