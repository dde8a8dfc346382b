// Initializers stored in external data files next to the model (how models over 2 GB are saved):
// they are read from the file, and a location, offset or length that a hostile model uses to
// leave the model's directory or the file is refused naming the initializer and the file.
#include <gtest/gtest.h>

#include <filesystem>

#include "host/onnx/onnx_test_models.h"
#include "tensoracle/build.h"
#include "tensoracle/engine.h"
#include "tensoracle/onnx.h"

namespace tensoracle::testing {
namespace {

std::string float_bytes(const std::vector<float>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
}

// Points initializer `t` at `location` (with offset/length when given) instead of raw_data.
void make_external(onnx::TensorProto* t, const std::string& location, const std::string& offset = "",
                   const std::string& length = "") {
  t->clear_raw_data();
  t->clear_external_data();
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [t](const std::string& key, const std::string& value) {
    onnx::StringStringEntryProto* entry = t->add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  };
  add("location", location);
  if (!offset.empty()) add("offset", offset);
  if (!length.empty()) add("length", length);
}

// y = x * a + b with x, a, b of shape [3]; a and b live in `weights.bin` (b at offset 16: a's 12
// bytes, then 4 bytes of padding, as onnx aligns tensors in one file).
struct ExternalModel {
  TempDir dir;
  onnx::ModelProto model = onnx_model(17);
  onnx::TensorProto* a = nullptr;
  onnx::TensorProto* b = nullptr;
  ExternalModel() {
    add_input(model, "x", {3});
    a = add_initializer(model, "a", {3}, {0, 0, 0});
    b = add_initializer(model, "b", {3}, {0, 0, 0});
    add_node(model, "Mul", {"x", "a"}, {"xa"}, "mul");
    add_node(model, "Add", {"xa", "b"}, {"y"}, "add");
    add_output(model, "y");
    make_external(a, "weights.bin", "", "12");
    make_external(b, "weights.bin", "16", "12");
    write_bytes(dir.file("weights.bin"), float_bytes({2, 3, 4}) + std::string(4, '\0') + float_bytes({1, -1, 0.5f}));
  }
  Result<ImportedModel> import() { return network_from_onnx(write_model(dir, model)); }
};

void expect_refused(Result<ImportedModel> imported, const std::string& part) {
  ASSERT_FALSE(imported.is_ok()) << "expected a refusal mentioning: " << part;
  EXPECT_NE(imported.status().message().find(part), std::string::npos) << imported.status().message();
  EXPECT_NE(imported.status().message().find("initializer '"), std::string::npos) << imported.status().message();
}

TEST(OnnxExternalData, InitializersAreReadFromTheFileNextToTheModel) {
  ExternalModel m;
  auto model = m.import();
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  const float x[3] = {1.0f, 2.0f, -1.0f};
  auto outputs = run_imported(*model, {{"x", ArrayView{DataType::kFloat32, Dims{3}, x}}});
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().message();
  const float* y = outputs->at("y").data_as<float>();
  EXPECT_FLOAT_EQ(y[0], 3.0f);    // 1*2 + 1
  EXPECT_FLOAT_EQ(y[1], 5.0f);    // 2*3 - 1
  EXPECT_FLOAT_EQ(y[2], -3.5f);   // -1*4 + 0.5
}

TEST(OnnxExternalData, TheDataFilesBytesEnterTheGraphHash) {
  ExternalModel m;
  Result<std::string> hash_before = Status(StatusCode::kInternal, "not imported");
  std::string sha_before;
  {  // the model (and its mapping of the file) is gone before the file is rewritten
    auto before = m.import();
    ASSERT_TRUE(before.is_ok()) << before.status().message();
    hash_before = structural_hash(before->network);
    sha_before = before->sha256;
  }
  write_bytes(m.dir.file("weights.bin"), float_bytes({2, 3, 5}) + std::string(4, '\0') + float_bytes({1, -1, 0.5f}));
  auto after = m.import();
  ASSERT_TRUE(after.is_ok()) << after.status().message();
  auto hash_after = structural_hash(after->network);
  ASSERT_TRUE(hash_before.is_ok() && hash_after.is_ok());
  EXPECT_NE(*hash_before, *hash_after);
  EXPECT_EQ(sha_before, after->sha256);  // the .onnx file itself did not change
}

TEST(OnnxExternalData, ALengthOmittedMeansTheRestOfTheFile) {
  ExternalModel m;
  make_external(m.b, "b.bin");
  write_bytes(m.dir.file("b.bin"), float_bytes({1, 2, 3}));
  auto model = m.import();
  ASSERT_TRUE(model.is_ok()) << model.status().message();
  // With one more byte in the file, the rest of the file no longer matches b's dims.
  write_bytes(m.dir.file("b.bin"), float_bytes({1, 2, 3}) + "x");
  expect_refused(m.import(), "external data length 13 in 'b.bin', but [3] of fp32 need 12 bytes");
}

TEST(OnnxExternalData, ASubdirectoryOfTheModelsDirectoryIsRead) {
  ExternalModel m;
  std::filesystem::create_directory(m.dir.file("data"));
  write_bytes(m.dir.file("data/a.bin"), float_bytes({2, 3, 4}));
  make_external(m.a, "data/a.bin", "0", "12");
  auto model = m.import();
  EXPECT_TRUE(model.is_ok()) << model.status().message();
}

TEST(OnnxExternalData, AnAbsolutePathIsRefused) {
  ExternalModel m;
  make_external(m.a, m.dir.file("weights.bin"), "0", "12");
  expect_refused(m.import(), "is refused: an absolute path");
}

TEST(OnnxExternalData, ADotDotComponentIsRefused) {
  ExternalModel m;
  std::filesystem::create_directory(m.dir.file("sub"));
  make_external(m.a, "sub/../../weights.bin", "0", "12");
  expect_refused(m.import(), "a '..' component leaves the model's directory");
  make_external(m.a, "..", "0", "12");
  expect_refused(m.import(), "a '..' component");
}

TEST(OnnxExternalData, ASymbolicLinkOutOfTheDirectoryIsRefused) {
  ExternalModel m;
  TempDir outside;
  write_bytes(outside.file("secret.bin"), float_bytes({2, 3, 4}));
  std::filesystem::create_symlink(outside.file("secret.bin"), m.dir.file("link.bin"));
  make_external(m.a, "link.bin", "0", "12");
  expect_refused(m.import(), "a symbolic link leads outside the model's directory");
  std::filesystem::create_directory_symlink(outside.path(), m.dir.file("linkdir"));
  make_external(m.a, "linkdir/secret.bin", "0", "12");
  expect_refused(m.import(), "a symbolic link leads outside the model's directory");
  // A link that stays inside the directory is followed.
  std::filesystem::create_symlink("weights.bin", m.dir.file("inside.bin"));
  make_external(m.a, "inside.bin", "0", "12");
  EXPECT_TRUE(m.import().is_ok());
}

TEST(OnnxExternalData, AMissingFileOrADirectoryIsNamed) {
  ExternalModel m;
  make_external(m.a, "absent.bin", "0", "12");
  expect_refused(m.import(), "external data file 'absent.bin' does not exist");
  std::filesystem::create_directory(m.dir.file("adir"));
  make_external(m.a, "adir", "0", "12");
  expect_refused(m.import(), "external data file 'adir'");
}

TEST(OnnxExternalData, OffsetAndLengthMustLieInsideTheFileAndMatchTheDims) {
  ExternalModel m;
  make_external(m.b, "weights.bin", "29", "12");
  expect_refused(m.import(), "initializer 'b': external data offset 29 is past the end of 'weights.bin' (28 bytes)");
  make_external(m.b, "weights.bin", "20", "12");
  expect_refused(m.import(), "external data length 12 at offset 20 runs past the end of 'weights.bin' (28 bytes)");
  make_external(m.b, "weights.bin", "0", "8");
  expect_refused(m.import(), "external data length 8 in 'weights.bin', but [3] of fp32 need 12 bytes");
  make_external(m.b, "weights.bin", "9223372036854775807", "9223372036854775807");
  expect_refused(m.import(), "is past the end");
  make_external(m.b, "weights.bin", "0", "99999999999999999999");
  expect_refused(m.import(), "external_data 'length' is '99999999999999999999'; expected a non-negative integer");
  make_external(m.b, "weights.bin", "-4", "12");
  expect_refused(m.import(), "external_data 'offset' is '-4'");
  make_external(m.b, "weights.bin", "16 ", "12");
  expect_refused(m.import(), "external_data 'offset' is '16 '");
}

TEST(OnnxExternalData, MalformedEntriesAreRefused) {
  ExternalModel m;
  make_external(m.a, "weights.bin", "0", "12");
  onnx::StringStringEntryProto* extra = m.a->add_external_data();
  extra->set_key("basepath");
  extra->set_value("/etc");
  expect_refused(m.import(), "external_data key 'basepath' is not supported");
  make_external(m.a, "", "0", "12");
  expect_refused(m.import(), "external_data has no 'location'");
  make_external(m.a, "weights.bin", "0", "12");
  m.a->set_raw_data(float_bytes({1, 2, 3}));
  expect_refused(m.import(), "its data location is EXTERNAL but it also holds data in the model");
  m.a->clear_raw_data();
  m.a->set_data_location(onnx::TensorProto::DEFAULT);
  expect_refused(m.import(), "it has external_data entries but its data_location is not EXTERNAL");
}

}  // namespace
}  // namespace tensoracle::testing
