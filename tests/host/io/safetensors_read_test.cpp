// Reading safetensors files written by the reference implementation (the `safetensors` package).
#include <gtest/gtest.h>

#include "io_test_support.h"
#include "tensoracle/safetensors.h"

namespace tensoracle {
namespace {

using testing::expect_matches_record;
using testing::expected_fixtures;
using testing::fixture;

TEST(SafetensorsDtype, NamesRoundTripForEveryDataType) {
  for (DataType dtype : all_data_types()) {
    auto parsed = safetensors_dtype_from_name(safetensors_dtype_name(dtype));
    ASSERT_TRUE(parsed.is_ok()) << data_type_name(dtype);
    EXPECT_EQ(*parsed, dtype);
  }
}

TEST(SafetensorsDtype, UnknownNamesAreRejectedByName) {
  for (const char* name : {"F4", "F8_E8M0", "C64", "f32", ""}) {
    auto parsed = safetensors_dtype_from_name(name);
    ASSERT_FALSE(parsed.is_ok());
    EXPECT_NE(parsed.status().message().find(std::string("'") + name + "'"), std::string::npos);
  }
}

TEST(SafetensorsFile, ReadsEveryDtypeWrittenByTheReferenceImplementation) {
  const std::string path = "safetensors/all_dtypes.safetensors";
  auto file = SafetensorsFile::open(fixture(path));
  ASSERT_TRUE(file.is_ok()) << file.status().to_string();
  const auto& records = expected_fixtures().at(path);
  ASSERT_EQ(file->tensors().size(), records.size());
  for (const auto& [name, record] : records.items()) {
    SCOPED_TRACE(name);
    auto view = file->view(name);
    ASSERT_TRUE(view.is_ok()) << view.status().to_string();
    expect_matches_record(*view, record);
  }
}

TEST(SafetensorsFile, ExposesMetadataAndTensorsInFileOrder) {
  auto file = SafetensorsFile::open(fixture("safetensors/all_dtypes.safetensors"));
  ASSERT_TRUE(file.is_ok());
  EXPECT_EQ(file->metadata().at("producer"), "gen-io-fixtures");
  EXPECT_EQ(file->metadata().at("format"), "np");
  uint64_t cursor = 0;
  for (const auto& info : file->tensors()) {
    EXPECT_EQ(info.begin, cursor) << info.name;
    cursor = info.end;
  }
  EXPECT_LE(cursor, file->file_size());
}

TEST(SafetensorsFile, ViewsPointIntoTheMappingWithoutCopying) {
  auto file = SafetensorsFile::open(fixture("safetensors/all_dtypes.safetensors"));
  ASSERT_TRUE(file.is_ok());
  auto first = file->view("fp32_tensor");
  auto again = file->view("fp32_tensor");
  ASSERT_TRUE(first.is_ok() && again.is_ok());
  EXPECT_EQ(first->data, again->data);
  // The view outlives the SafetensorsFile handle it came from as long as a copy lives.
  SafetensorsFile copy = *file;
  file = Status(StatusCode::kInternal, "dropped");
  EXPECT_EQ(load_as_double(DataType::kFloat32, first->data, 0),
            load_as_double(DataType::kFloat32, copy.view("fp32_tensor")->data, 0));
}

TEST(SafetensorsFile, UnknownTensorErrorNamesTheNearestNames) {
  auto file = SafetensorsFile::open(fixture("safetensors/all_dtypes.safetensors"));
  ASSERT_TRUE(file.is_ok());
  EXPECT_TRUE(file->contains("bf16_tensor"));
  EXPECT_FALSE(file->contains("bf16_tensr"));
  auto view = file->view("bf16_tensr");
  ASSERT_FALSE(view.is_ok());
  EXPECT_EQ(view.status().code(), StatusCode::kNotFound);
  EXPECT_NE(view.status().message().find("'bf16_tensr'"), std::string::npos);
  EXPECT_NE(view.status().message().find("nearest: 'bf16_tensor'"), std::string::npos) << view.status().message();
}

TEST(SafetensorsFile, MissingFileIsNotFound) {
  auto file = SafetensorsFile::open(fixture("safetensors/no_such_file.safetensors"));
  ASSERT_FALSE(file.is_ok());
  EXPECT_EQ(file.status().code(), StatusCode::kNotFound);
  EXPECT_NE(file.status().message().find("no_such_file.safetensors"), std::string::npos);
}

TEST(Weights, OpensAShardedCheckpointThroughItsIndex) {
  const std::string path = "safetensors/sharded/model.safetensors.index.json";
  auto weights = Weights::open(fixture(path));
  ASSERT_TRUE(weights.is_ok()) << weights.status().to_string();
  const auto& records = expected_fixtures().at(path);
  std::vector<std::string> expected_names;
  for (const auto& [name, record] : records.items()) expected_names.push_back(name);
  EXPECT_EQ(weights->names(), expected_names);  // both sorted
  for (const auto& [name, record] : records.items()) {
    SCOPED_TRACE(name);
    auto view = weights->view(name);
    ASSERT_TRUE(view.is_ok()) << view.status().to_string();
    expect_matches_record(*view, record);
    auto info = weights->info(name);
    ASSERT_TRUE(info.is_ok());
    EXPECT_EQ(info->shape, view->shape);
  }
  EXPECT_EQ(weights->files().size(), 2u);
  // Index metadata values that are not strings are kept as their JSON text.
  EXPECT_FALSE(weights->metadata().at("total_size").empty());
}

TEST(Weights, OpensASingleFile) {
  auto weights = Weights::open(fixture("safetensors/all_dtypes.safetensors"));
  ASSERT_TRUE(weights.is_ok()) << weights.status().to_string();
  EXPECT_TRUE(weights->contains("int8_tensor"));
  EXPECT_EQ(weights->metadata().at("producer"), "gen-io-fixtures");
  EXPECT_EQ(weights->files(), std::vector<std::string>{fixture("safetensors/all_dtypes.safetensors")});
  auto missing = weights->view("int8_tensors");
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("'int8_tensor'"), std::string::npos);
}

TEST(Weights, RejectsOtherExtensions) {
  auto weights = Weights::open(fixture("npy/fp32.npy"));
  ASSERT_FALSE(weights.is_ok());
  EXPECT_EQ(weights.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(weights.status().message().find(".safetensors"), std::string::npos);
}

}  // namespace
}  // namespace tensoracle
