// Every case listed in a manifest.json written by scripts/gen-pth-fixtures.py:
//   tests/fixtures/pth/          real torch.save files, expected tensors from torch.load (GPU machine)
//   tests/fixtures/pth/crafted/  hand-built torch-layout archives, NumPy as the reference
//   $TENSORACLE_PTH_EXTRA_FIXTURES  e.g. the ResNet-18 set (--resnet18), too big to commit
// A conversion must give tensors bit-equal to the expected safetensors file (names, dtypes,
// shapes, bytes) and the documented metadata; a refused file must fail with the listed message
// and leave no output behind.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tensoracle/float_formats.h"
#include "tensoracle/hashing.h"
#include "tensoracle/pth.h"
#include "tensoracle/safetensors.h"

namespace tensoracle {
namespace {

namespace fs = std::filesystem;

struct FixtureCase {
  std::string id;  // test name
  fs::path dir;
  std::string file;
  std::string key;
  std::string dtype = "keep";
  std::string expected;  // empty for refusals
  std::string error;
  std::vector<std::string> notes;
};

void PrintTo(const FixtureCase& c, std::ostream* os) { *os << c.id; }

std::vector<fs::path> manifest_dirs() {
  std::vector<fs::path> dirs = {fs::path(TENSORACLE_FIXTURES_DIR) / "pth", fs::path(TENSORACLE_FIXTURES_DIR) / "pth" / "crafted"};
  if (const char* extra = std::getenv("TENSORACLE_PTH_EXTRA_FIXTURES")) dirs.emplace_back(extra);
  return dirs;
}

std::string sanitize(const std::string& text) {
  std::string out;
  for (char c : text) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

std::vector<FixtureCase> load_cases() {
  std::vector<FixtureCase> cases;
  for (const fs::path& dir : manifest_dirs()) {
    std::ifstream in(dir / "manifest.json");
    if (!in) continue;
    const nlohmann::json manifest = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!manifest.is_object() || !manifest.contains("cases")) continue;
    for (const auto& entry : manifest["cases"]) {
      FixtureCase c;
      c.dir = dir;
      c.file = entry.value("file", "");
      c.key = entry.value("key", "");
      c.dtype = entry.value("dtype", "keep");
      c.expected = entry.value("expected", "");
      c.error = entry.value("error", "");
      c.notes = entry.value("notes", std::vector<std::string>{});
      c.id = sanitize(dir.filename().string() + "_" + fs::path(c.file).stem().string() +
                      (c.key.empty() ? "" : "_" + c.key) + (c.dtype == "keep" ? "" : "_" + c.dtype));
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

class PthFixture : public ::testing::TestWithParam<FixtureCase> {
 protected:
  void SetUp() override {
    std::string pattern = (fs::path(::testing::TempDir()) / "pth_fixture_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    out_dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(out_dir_); }
  fs::path out_dir_;
};

TEST_P(PthFixture, ConvertsOrRefusesAsListed) {
  const FixtureCase& c = GetParam();
  const std::string input = (c.dir / c.file).string();
  const std::string output = (out_dir_ / "out.safetensors").string();
  PthOptions options;
  options.key = c.key;
  if (c.dtype != "keep") options.float_dtype = *parse_data_type(c.dtype);
  auto conversion = convert_pth_to_safetensors(input, output, options);

  if (!c.error.empty()) {
    ASSERT_FALSE(conversion.is_ok()) << c.file << " was converted but must be refused";
    EXPECT_NE(conversion.status().message().find(c.error), std::string::npos)
        << "expected '" << c.error << "' in: " << conversion.status().message();
    EXPECT_FALSE(fs::exists(output)) << "a failed conversion left " << output;
    EXPECT_TRUE(fs::is_empty(out_dir_)) << "a failed conversion left a temporary file";
    return;
  }
  ASSERT_TRUE(conversion.is_ok()) << conversion.status().to_string();
  for (const std::string& note : c.notes) {
    bool found = false;
    for (const std::string& line : conversion->notes) found = found || line.find(note) != std::string::npos;
    EXPECT_TRUE(found) << "no note mentions '" << note << "'";
  }

  auto got = SafetensorsFile::open(output);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  auto expected = SafetensorsFile::open((c.dir / c.expected).string());
  ASSERT_TRUE(expected.is_ok()) << expected.status().to_string();
  ASSERT_EQ(got->tensors().size(), expected->tensors().size());
  for (const SafetensorsTensorInfo& info : expected->tensors()) {
    auto want = expected->view(info.name);
    auto have = got->view(info.name);
    ASSERT_TRUE(have.is_ok()) << "missing tensor " << info.name;
    EXPECT_EQ(have->dtype, want->dtype) << info.name;
    EXPECT_EQ(have->shape, want->shape) << info.name;
    ASSERT_EQ(have->byte_size(), want->byte_size()) << info.name;
    if (c.dtype == "keep" || !is_floating_point(want->dtype)) {
      EXPECT_EQ(std::memcmp(have->data, want->data, want->byte_size()), 0) << info.name << " differs bit-wise";
      continue;
    }
    // After a dtype conversion only NaN bit patterns may differ: torch's vectorized kernels give
    // hardware NaNs (bf16 0xFFFF, payload-keeping fp16) and its scalar tails canonical ones, so no
    // fixed rule reproduces them. Every other value must match bit for bit.
    const size_t element_size = data_type_size(want->dtype);
    for (int64_t i = 0; i < want->element_count(); ++i) {
      const auto* a = static_cast<const uint8_t*>(have->data) + i * element_size;
      const auto* b = static_cast<const uint8_t*>(want->data) + i * element_size;
      if (std::isnan(load_as_double(want->dtype, want->data, static_cast<size_t>(i))))
        EXPECT_TRUE(std::isnan(load_as_double(have->dtype, have->data, static_cast<size_t>(i)))) << info.name << "[" << i << "]";
      else
        EXPECT_EQ(std::memcmp(a, b, element_size), 0) << info.name << "[" << i << "] differs bit-wise";
    }
  }

  const auto& metadata = got->metadata();
  EXPECT_EQ(metadata.at("source_sha256"), *sha256_file_hex(input));
  EXPECT_EQ(metadata.at("source_sha256"), conversion->source_sha256);
  EXPECT_EQ(metadata.at("tensor_count"), std::to_string(expected->tensors().size()));
  EXPECT_EQ(metadata.at("source_file"), c.file);
  EXPECT_EQ(metadata.at("converter").rfind("tensoracle ", 0), 0u);
  EXPECT_EQ(metadata.count("source_key"), c.key.empty() ? 0u : 1u);
}

INSTANTIATE_TEST_SUITE_P(Manifest, PthFixture, ::testing::ValuesIn(load_cases()),
                         [](const ::testing::TestParamInfo<FixtureCase>& param_info) { return param_info.param.id; });

TEST(PthFixtures, RealTorchFixturesArePresent) {
  if (!fs::exists(fs::path(TENSORACLE_FIXTURES_DIR) / "pth" / "manifest.json"))
    GTEST_SKIP() << "tests/fixtures/pth/manifest.json is not generated yet: run "
                    "'scripts/gen-pth-fixtures.py --out tests/fixtures/pth' where torch is installed";
  bool has_real_case = false;
  for (const FixtureCase& c : load_cases()) has_real_case = has_real_case || (c.dir.filename() == "pth" && !c.expected.empty());
  EXPECT_TRUE(has_real_case);
}

}  // namespace
}  // namespace tensoracle
