// manifest.json: the schema, round trips, and picking the cubins for a GPU.
#include <gtest/gtest.h>

#include "host/bundle/bundle_test_util.h"
#include "tensoracle/bundle.h"

namespace tensoracle {
namespace {

using testing::example_bundle;
using testing::read_bytes;

TEST(BundleManifest, TheCompiledExampleRecordsWhatItContains) {
  auto manifest = read_bundle_manifest(example_bundle().string());
  ASSERT_TRUE(manifest.is_ok()) << manifest.status().message();
  EXPECT_EQ(manifest->name, "example");
  EXPECT_EQ(manifest->version, "1.0.0");
  EXPECT_NE(manifest->compiler.version.find("Cuda compilation tools"), std::string::npos);
  ASSERT_EQ(manifest->sources.size(), 2u);
  EXPECT_EQ(manifest->sources[0].name, "elementwise.cu");
  EXPECT_EQ(manifest->sources[0].sha256,
            sha256_hex(read_bytes(TENSORACLE_SOURCE_DIR "/examples/bundle_example/kernels/elementwise.cu")));
  EXPECT_EQ(manifest->sources[0].kernels, (std::vector<std::string>{"scale_bias"}));
  EXPECT_EQ(manifest->sources[1].kernels, (std::vector<std::string>{"gated_residual"}));
  ASSERT_EQ(manifest->cubins.size(), 4u);
  for (const BundleCubin& cubin : manifest->cubins) {
    const std::string bytes = read_bytes(example_bundle() / cubin.path);
    EXPECT_EQ(cubin.path, cubin.arch.name() + "/" + cubin.source.substr(0, cubin.source.size() - 3) + ".cubin");
    EXPECT_EQ(cubin.size, bytes.size()) << cubin.path;
    EXPECT_EQ(cubin.sha256, sha256_hex(bytes)) << cubin.path;
  }
}

TEST(BundleManifest, RoundTripsThroughJson) {
  auto manifest = read_bundle_manifest(example_bundle().string());
  ASSERT_TRUE(manifest.is_ok());
  const std::string json = bundle_manifest_to_json(*manifest);
  auto again = parse_bundle_manifest(json);
  ASSERT_TRUE(again.is_ok()) << again.status().message();
  EXPECT_EQ(bundle_manifest_to_json(*again), json);
}

// Each edit breaks the schema in one way; the error names the JSON path.
TEST(BundleManifest, SchemaViolationsAreCorruptDataNamingThePath) {
  const auto base = testing::read_manifest_json(example_bundle());
  const auto error_after = [&](void (*edit)(nlohmann::ordered_json&)) {
    auto json = base;
    edit(json);
    auto parsed = parse_bundle_manifest(json.dump());
    EXPECT_FALSE(parsed.is_ok());
    if (parsed.is_ok()) return std::string();
    EXPECT_EQ(parsed.status().code(), StatusCode::kCorruptData);
    return parsed.status().message();
  };
  EXPECT_EQ(parse_bundle_manifest("[").status().message(),
            "manifest.json: /0: invalid JSON: parse error at line 1, column 2: syntax error while parsing value - "
            "unexpected end of input; expected '[', '{', or a literal");
  EXPECT_EQ(error_after([](auto& j) { j["format"] = "zip"; }),
            "manifest.json: /format: expected \"tensoracle-cubin-bundle\", got \"zip\"");
  EXPECT_EQ(error_after([](auto& j) { j["format_version"] = 2; }),
            "manifest.json: /format_version: format version 2 is not supported (this tensoracle reads version 1)");
  EXPECT_EQ(error_after([](auto& j) { j.erase("compiler"); }), "manifest.json: missing field 'compiler'");
  EXPECT_EQ(error_after([](auto& j) { j["extra"] = 1; }),
            "manifest.json: unknown key 'extra' (known keys: format, format_version, name, version, compiler, sources, "
            "cubins)");
  EXPECT_EQ(error_after([](auto& j) { j["cubins"][1]["arch"] = "sm90"; }),
            "manifest.json: /cubins/1/arch: invalid GPU architecture 'sm90': expected sm_<compute capability>[a|f], e.g. sm_90");
  EXPECT_EQ(error_after([](auto& j) { j["cubins"][0]["size"] = -1; }),
            "manifest.json: /cubins/0/size: expected an integer >= 0, got -1");
  EXPECT_EQ(error_after([](auto& j) { j["cubins"][0]["sha256"] = "abc"; }),
            "manifest.json: /cubins/0/sha256: 'abc' is not a lower-case hex SHA-256");
  EXPECT_EQ(error_after([](auto& j) { j["cubins"][0]["source"] = "other.cu"; }),
            "manifest.json: /cubins/0: field 'source': 'other.cu' is not one of the manifest's sources");
  EXPECT_EQ(error_after([](auto& j) { j["cubins"][1]["path"] = j["cubins"][0]["path"]; }).find("is used twice") !=
                std::string::npos,
            true);
  EXPECT_EQ(error_after([](auto& j) { j["cubins"][0]["kernels"] = {1}; }), "manifest.json: /cubins/0/kernels/0: expected a string, got 1");
  EXPECT_EQ(error_after([](auto& j) { j["sources"] = nlohmann::ordered_json::array(); }),
            "manifest.json: /sources: expected a non-empty array");
}

BundleManifest manifest_with(const std::vector<const char*>& architectures) {
  BundleManifest manifest;
  for (const char* name : architectures) {
    BundleCubin cubin;
    cubin.arch = *parse_gpu_arch(name);
    cubin.path = std::string(name) + "/k.cubin";
    manifest.cubins.push_back(cubin);
  }
  return manifest;
}

std::string selected(const BundleManifest& manifest, int sm) {
  auto cubins = select_cubins_for_device(manifest, sm);
  return cubins.empty() ? "none" : cubins[0].arch.name();
}

TEST(SelectCubinsForDevice, ExactArchitectureElseNewestCompatibleOfTheSameMajor) {
  const BundleManifest manifest = manifest_with({"sm_80", "sm_86", "sm_90a", "sm_90", "sm_100a"});
  EXPECT_EQ(selected(manifest, 90), "sm_90");   // plain preferred over the 'a' variant
  EXPECT_EQ(selected(manifest, 86), "sm_86");
  EXPECT_EQ(selected(manifest, 89), "sm_86");   // same major, newest not newer than the GPU
  EXPECT_EQ(selected(manifest, 87), "sm_86");
  EXPECT_EQ(selected(manifest, 100), "sm_100a");
  EXPECT_EQ(selected(manifest, 103), "none");   // 'a' cubins run only on their exact architecture
  EXPECT_EQ(selected(manifest, 75), "none");
  EXPECT_EQ(selected(manifest, 120), "none");
  EXPECT_EQ(select_cubins_for_device(manifest_with({"sm_90", "sm_90"}), 90).size(), 2u);
}

}  // namespace
}  // namespace tensoracle
