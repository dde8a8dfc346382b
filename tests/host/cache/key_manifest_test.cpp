// The key manifest: every field changes the key, nothing else does; canonical text; differences.
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "host/cache/cache_testing.h"
#include "tensoracle/cache.h"
#include "tensoracle/hashing.h"

namespace tensoracle {
namespace {

using testing::sample_manifest;

struct FieldChange {
  const char* field;
  std::function<void(KeyManifest&)> change;
};

// One entry per item the cache key holds (docs/cache.md).
std::vector<FieldChange> every_field() {
  return {
      {"format_version", [](KeyManifest& m) { m.format_version = kEngineFormatVersion + 1; }},
      {"engine_name", [](KeyManifest& m) { m.engine_name = "tinynet2"; }},
      {"graph_version", [](KeyManifest& m) { m.graph_version = "2"; }},
      {"graph_hash", [](KeyManifest& m) { m.graph_hash[0] = 'f'; }},
      {"weights_hash", [](KeyManifest& m) { m.weights_hash[0] = 'f'; }},
      {"profile shape", [](KeyManifest& m) { m.profiles[0]["image"].max = Dims{8, 3, 8, 8}; }},
      {"profile opt", [](KeyManifest& m) { m.profiles[0]["image"].opt = Dims{3, 3, 8, 8}; }},
      {"another profile", [](KeyManifest& m) { m.profiles.push_back(m.profiles[0]); }},
      {"input name", [](KeyManifest& m) { m.profiles[0]["masks"] = m.profiles[0]["mask"]; m.profiles[0].erase("mask"); }},
      {"builder setting value", [](KeyManifest& m) { m.builder_settings["precision"] = "fp16"; }},
      {"builder setting added", [](KeyManifest& m) { m.builder_settings["workspace_bytes"] = "1073741824"; }},
      {"plugin version", [](KeyManifest& m) { m.plugins[0].version = "3"; }},
      {"plugin library hash", [](KeyManifest& m) { m.plugins[0].library_sha256[0] = 'e'; }},
      {"plugin bundle manifest hash", [](KeyManifest& m) { m.plugins[0].bundle_manifest_sha256[0] = 'e'; }},
      {"plugin library file", [](KeyManifest& m) { m.plugins[0].library = "libother.so"; }},
      {"plugin added", [](KeyManifest& m) { m.plugins.push_back({"other", "1", "", "", ""}); }},
      {"backend", [](KeyManifest& m) { m.environment.backend = "cuda"; }},
      {"gpu present", [](KeyManifest& m) { m.environment.gpu = GpuProperties{}; }},
      {"gpu.name", [](KeyManifest& m) { m.environment.gpu = GpuProperties{}; m.environment.gpu->name = "NVIDIA H200"; }},
      {"gpu.compute_capability", [](KeyManifest& m) { m.environment.gpu = GpuProperties{}; m.environment.gpu->compute_capability_minor = 9; }},
      {"gpu.sm_count", [](KeyManifest& m) { m.environment.gpu = GpuProperties{}; m.environment.gpu->sm_count = 132; }},
      {"gpu.l2_cache_bytes", [](KeyManifest& m) { m.environment.gpu = GpuProperties{}; m.environment.gpu->l2_cache_bytes = 1; }},
      {"gpu.memory_bus_width_bits", [](KeyManifest& m) { m.environment.gpu = GpuProperties{}; m.environment.gpu->memory_bus_width_bits = 1; }},
      {"gpu.shared_memory_per_block_optin", [](KeyManifest& m) { m.environment.gpu = GpuProperties{}; m.environment.gpu->shared_memory_per_block_optin_bytes = 1; }},
      {"gpu.shared_memory_per_sm", [](KeyManifest& m) { m.environment.gpu = GpuProperties{}; m.environment.gpu->shared_memory_per_sm_bytes = 1; }},
      {"gpu.total_memory", [](KeyManifest& m) { m.environment.gpu = GpuProperties{}; m.environment.gpu->total_memory_bytes = 1; }},
      {"gpu.ecc", [](KeyManifest& m) { m.environment.gpu = GpuProperties{}; m.environment.gpu->ecc_enabled = true; }},
      {"gpu.integrated", [](KeyManifest& m) { m.environment.gpu = GpuProperties{}; m.environment.gpu->integrated = true; }},
      {"cuda present", [](KeyManifest& m) { m.environment.cuda = CudaVersions{}; }},
      {"cuda.runtime", [](KeyManifest& m) { m.environment.cuda = CudaVersions{"13.0", "", "", ""}; }},
      {"cuda.driver", [](KeyManifest& m) { m.environment.cuda = CudaVersions{"", "13.0", "", ""}; }},
      {"cuda.cublaslt", [](KeyManifest& m) { m.environment.cuda = CudaVersions{"", "", "13.0.0", ""}; }},
      {"cuda.cudnn", [](KeyManifest& m) { m.environment.cuda = CudaVersions{"", "", "", "9.10.2"}; }},
      {"tensoracle_version", [](KeyManifest& m) { m.environment.tensoracle_version = "0.2.0"; }},
      {"os", [](KeyManifest& m) { m.environment.os = "Darwin"; }},
      {"cpu_arch", [](KeyManifest& m) { m.environment.cpu_arch = "aarch64"; }},
  };
}

TEST(KeyManifest, EveryFieldChangesTheKey) {
  const std::string base = cache_key(sample_manifest());
  std::set<std::string> keys = {base};
  for (const FieldChange& field : every_field()) {
    KeyManifest changed = sample_manifest();
    field.change(changed);
    const std::string key = cache_key(changed);
    EXPECT_NE(key, base) << field.field;
    EXPECT_TRUE(keys.insert(key).second) << field.field << " collides with another change";
  }
}

TEST(KeyManifest, InsertionOrderDoesNotChangeTheKey) {
  KeyManifest forward = sample_manifest();
  KeyManifest reversed = sample_manifest();
  reversed.profiles[0].clear();
  reversed.profiles[0]["mask"] = ShapeRange::fixed({1, 8, 8});
  reversed.profiles[0]["image"] = ShapeRange{{1, 3, 8, 8}, {2, 3, 8, 8}, {4, 3, 8, 8}};
  reversed.builder_settings.clear();
  reversed.builder_settings["tf32"] = "off";
  reversed.builder_settings["precision"] = "fp32";
  reversed.builder_settings["optimization_level"] = "3";
  forward.plugins.push_back({"aaa", "1", "", "", ""});
  reversed.plugins.insert(reversed.plugins.begin(), {"aaa", "1", "", "", ""});
  EXPECT_EQ(cache_key(forward), cache_key(reversed));
  EXPECT_EQ(manifest_to_json(forward), manifest_to_json(reversed));
}

TEST(KeyManifest, InformationalFieldsAreNotInTheKey) {
  KeyManifest a = sample_manifest();
  KeyManifest b = sample_manifest();
  b.environment.cuda_unavailable_reason = "no CUDA in this build";
  EXPECT_EQ(cache_key(a), cache_key(b));
}

TEST(KeyManifest, KeyIsTheSha256OfTheCanonicalText) {
  const KeyManifest manifest = sample_manifest();
  const std::string text = manifest_to_json(manifest);
  EXPECT_EQ(cache_key(manifest), sha256_hex(text));
  EXPECT_EQ(cache_key(manifest).size(), 64u);
}

TEST(KeyManifest, CanonicalTextIsReadableAndSorted) {
  const std::string text = manifest_to_json(sample_manifest());
  EXPECT_NE(text.find("\n  \"builder_settings\": {"), std::string::npos) << text;
  EXPECT_LT(text.find("\"builder_settings\""), text.find("\"engine_name\""));
  EXPECT_LT(text.find("\"engine_name\""), text.find("\"environment\""));
  EXPECT_NE(text.find("\"gpu\": null"), std::string::npos) << text;
}

TEST(KeyManifest, RoundTripsThroughJson) {
  KeyManifest manifest = sample_manifest();
  manifest.environment.gpu = GpuProperties{"NVIDIA H200", 9, 0, 132, 1, 2, 3, 4, 5, true, false};
  manifest.environment.cuda = CudaVersions{"13.0", "13.0", "13.0.0", "9.10.2"};
  const std::string text = manifest_to_json(manifest);
  auto parsed = manifest_from_json(text, "m.json");
  ASSERT_TRUE(parsed.is_ok()) << parsed.status().to_string();
  EXPECT_EQ(manifest_to_json(*parsed), text);
}

TEST(KeyManifest, ParserNamesTheBadField) {
  std::string text = manifest_to_json(sample_manifest());
  text.replace(text.find("\"precision\": \"fp32\""), 19, "\"precision\": 32");
  auto parsed = manifest_from_json(text, "m.json");
  ASSERT_FALSE(parsed.is_ok());
  EXPECT_NE(parsed.status().message().find("m.json: /builder_settings/precision: expected a string, got 32"), std::string::npos)
      << parsed.status().message();
}

TEST(ManifestDifferences, NamesDottedPaths) {
  KeyManifest a = sample_manifest();
  KeyManifest b = sample_manifest();
  b.builder_settings["precision"] = "fp16";
  b.environment.gpu = GpuProperties{};
  b.profiles[0]["image"].max = Dims{8, 3, 8, 8};
  b.builder_settings["workspace_bytes"] = "1";
  auto differences = manifest_differences(manifest_to_json(a), manifest_to_json(b));
  ASSERT_TRUE(differences.is_ok());
  EXPECT_EQ(*differences, (std::vector<std::string>{"builder_settings.precision", "builder_settings.workspace_bytes",
                                                    "environment.gpu", "profiles[0].image.max"}));
  auto none = manifest_differences(manifest_to_json(a), manifest_to_json(a));
  EXPECT_TRUE(none->empty());
}

}  // namespace
}  // namespace tensoracle
