// A plugin library loaded with its cubin bundle: where the bundle is looked for, what makes it
// refused (with the library and the bundle named), and how its manifest's SHA-256 enters the
// plugin's fingerprint: a changed bundle is a cache miss, and an engine built with another bundle
// is refused. The test libraries are the cubin-backed builds of tests/host/plugin/CMakeLists.txt.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "host/cache/cache_testing.h"
#include "host/plugin/plugin_testing.h"
#include "tensoracle/engine.h"
#include "tensoracle/hashing.h"

namespace tensoracle {
namespace {

namespace fs = std::filesystem;
using testing::scale_add_build;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

PluginLibraryOptions with_bundle(const std::string& dir) {
  PluginLibraryOptions options;
  options.bundle_dir = dir;
  return options;
}

PluginRegistry loaded(const std::string& library, const PluginLibraryOptions& options = {}) {
  PluginRegistry registry;
  const Status status = registry.load_library(library, options);
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  return registry;
}

std::string read_text(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// A copy of the test bundle whose manifest records another bundle version: still valid, other bytes.
void copy_bundle_with_version(const std::string& to, const std::string& version) {
  fs::copy(TEST_CUBIN_PLUGINS_BUNDLE, to, fs::copy_options::recursive);
  const std::string manifest = to + "/manifest.json";
  std::string text = read_text(manifest);
  const std::string from = "\"version\": \"1.0.0\"";
  ASSERT_NE(text.find(from), std::string::npos) << text;
  text.replace(text.find(from), from.size(), "\"version\": \"" + version + "\"");
  write_text(manifest, text);
}

TEST(PluginBundle, ALibraryWhosePluginsDeclareKernelsLoadsTheBundleBesideItAndFingerprintsItsManifest) {
  const PluginRegistry registry = loaded(TEST_CUBIN_PLUGINS_LIBRARY);
  const PluginLibrary& library = *registry.libraries().at(0);
  ASSERT_NE(library.bundle, nullptr);
  EXPECT_EQ(fs::path(library.bundle->dir), fs::path(TEST_CUBIN_PLUGINS_BUNDLE));
  const std::string manifest_sha256 = sha256_file_hex(std::string(TEST_CUBIN_PLUGINS_BUNDLE) + "/manifest.json").value();
  EXPECT_EQ(library.bundle->manifest_sha256, manifest_sha256);
  EXPECT_EQ(registry.plugins().at(0)->fingerprint().bundle_manifest_sha256, manifest_sha256);
}

TEST(PluginBundle, TheDefaultBundleIsNAME_bundleBesideLibNAME_so) {
  testing::TempDir dir;
  fs::copy_file(TEST_CUBIN_PLUGINS_LIBRARY, dir / "libmine.so");
  fs::copy(TEST_CUBIN_PLUGINS_BUNDLE, dir / "mine_bundle", fs::copy_options::recursive);
  const PluginRegistry registry = loaded(dir / "libmine.so");
  ASSERT_NE(registry.libraries().at(0)->bundle, nullptr);
  EXPECT_EQ(registry.libraries().at(0)->bundle->dir, dir / "mine_bundle");
}

TEST(PluginBundle, AnExplicitBundleDirectoryIsUsedInsteadOfTheDefault) {
  testing::TempDir dir;
  fs::copy_file(TEST_CUBIN_PLUGINS_LIBRARY, dir / "libalone.so");
  const PluginRegistry registry = loaded(dir / "libalone.so", with_bundle(TEST_CUBIN_PLUGINS_BUNDLE));
  ASSERT_NE(registry.libraries().at(0)->bundle, nullptr);
  EXPECT_EQ(registry.libraries().at(0)->bundle->dir, TEST_CUBIN_PLUGINS_BUNDLE);
}

TEST(PluginBundle, AMissingBundleIsRefusedNamingTheLibraryThePathAndThePluginsThatNeedIt) {
  testing::TempDir dir;
  fs::copy_file(TEST_CUBIN_PLUGINS_LIBRARY, dir / "libalone.so");
  PluginRegistry registry;
  const Status status = registry.load_library(dir / "libalone.so");
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_TRUE(contains(status.message(), "plugin library '" + (dir / "libalone.so") + "': its cubin bundle '" +
                                             (dir / "alone_bundle") + "' does not exist"))
      << status.message();
  EXPECT_TRUE(contains(status.message(), "test::scale_add 1.0.0 declare(s) bundle kernels")) << status.message();
  EXPECT_TRUE(contains(status.message(), "--plugin LIB:BUNDLE_DIR")) << status.message();
  EXPECT_TRUE(registry.empty());
}

TEST(PluginBundle, ALibraryNotNamedLibNAME_soNeedsItsBundleNamed) {
  testing::TempDir dir;
  fs::copy_file(TEST_CUBIN_PLUGINS_LIBRARY, dir / "plugins.module");
  PluginRegistry registry;
  const Status status = registry.load_library(dir / "plugins.module");
  EXPECT_FALSE(status.is_ok());
  EXPECT_TRUE(contains(status.message(), "its bundle directory cannot be derived from the file name 'plugins.module'"))
      << status.message();
  EXPECT_TRUE(registry.load_library(dir / "plugins.module", with_bundle(TEST_CUBIN_PLUGINS_BUNDLE)).is_ok());
}

TEST(PluginBundle, ABundleLackingADeclaredKernelIsRefusedNamingTheKernel) {
  PluginRegistry registry;
  const Status status = registry.load_library(TEST_CUBIN_PLUGINS_MISSING_LIBRARY, with_bundle(TEST_CUBIN_PLUGINS_BUNDLE));
  EXPECT_FALSE(status.is_ok());
  EXPECT_TRUE(contains(status.message(), "its cubin bundle '" + std::string(TEST_CUBIN_PLUGINS_BUNDLE) +
                                             "' lacks what its plugins declare"))
      << status.message();
  EXPECT_TRUE(contains(status.message(), "test::scale_add 1.0.0 needs kernel 'layer_norm', but no readable sm_90 cubin "
                                         "defines it"))
      << status.message();
  EXPECT_TRUE(registry.empty());
}

TEST(PluginBundle, ABundleLackingADeclaredArchitectureIsRefusedNamingIt) {
  PluginRegistry registry;
  const Status status = registry.load_library(TEST_CUBIN_PLUGINS_LIBRARY, with_bundle(TEST_CUBIN_PLUGINS_SM80_BUNDLE));
  EXPECT_FALSE(status.is_ok());
  EXPECT_TRUE(contains(status.message(), "test::scale_add 1.0.0 declares sm_90, but the bundle has no cubin for it"))
      << status.message();
}

TEST(PluginBundle, AnInvalidManifestIsRefusedNamingTheBundleAndTheProblem) {
  testing::TempDir dir;
  fs::copy(TEST_CUBIN_PLUGINS_BUNDLE, dir / "bundle", fs::copy_options::recursive);
  std::string manifest = read_text(dir / "bundle/manifest.json");
  manifest.replace(manifest.find("tensoracle-cubin-bundle"), 23, "some-other-format");
  write_text(dir / "bundle/manifest.json", manifest);
  PluginRegistry registry;
  const Status status = registry.load_library(TEST_CUBIN_PLUGINS_LIBRARY, with_bundle(dir / "bundle"));
  EXPECT_EQ(status.code(), StatusCode::kCorruptData);
  EXPECT_TRUE(contains(status.message(), "its cubin bundle '" + (dir / "bundle") + "'")) << status.message();
  EXPECT_TRUE(contains(status.message(), "expected \"tensoracle-cubin-bundle\"")) << status.message();
}

TEST(PluginBundle, ACubinThatDoesNotMatchItsManifestIsRefused) {
  testing::TempDir dir;
  fs::copy(TEST_CUBIN_PLUGINS_BUNDLE, dir / "bundle", fs::copy_options::recursive);
  const std::string cubin = dir / "bundle/sm_90/scale_add_bundle_kernel.cubin";
  std::string bytes = read_text(cubin);
  ASSERT_FALSE(bytes.empty());
  bytes.back() = static_cast<char>(bytes.back() ^ 1);
  write_text(cubin, bytes);
  PluginRegistry registry;
  const Status status = registry.load_library(TEST_CUBIN_PLUGINS_LIBRARY, with_bundle(dir / "bundle"));
  EXPECT_EQ(status.code(), StatusCode::kCorruptData);
  EXPECT_TRUE(contains(status.message(), "cubin 'sm_90/scale_add_bundle_kernel.cubin' has SHA-256")) << status.message();
}

TEST(PluginBundle, WithoutBundleLoadsNoBundleAndFingerprintsNone) {
  PluginLibraryOptions options;
  options.without_bundle = true;
  const PluginRegistry registry = loaded(TEST_CUBIN_PLUGINS_MISSING_LIBRARY, options);
  EXPECT_EQ(registry.libraries().at(0)->bundle, nullptr);
  EXPECT_EQ(registry.plugins().at(0)->fingerprint().bundle_manifest_sha256, "");
}

TEST(PluginBundle, ALibraryWithoutBundleKernelsNeedsNoBundle) {
  const PluginRegistry registry = loaded(TEST_PLUGINS_LIBRARY);
  EXPECT_EQ(registry.libraries().at(0)->bundle, nullptr);
}

TEST(PluginBundle, AChangedBundleIsACacheMissThatSaysSo) {
  testing::TempDir dir;
  copy_bundle_with_version(dir / "one", "1.0.0-one");
  copy_bundle_with_version(dir / "two", "1.0.0-two");
  CacheOptions cache;
  cache.directory = dir / "cache";
  auto first = open_engine(scale_add_build(loaded(TEST_CUBIN_PLUGINS_LIBRARY, with_bundle(dir / "one"))),
                           CachePolicy::kReuse, cache);
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  EXPECT_TRUE(first->built);
  auto again = open_engine(scale_add_build(loaded(TEST_CUBIN_PLUGINS_LIBRARY, with_bundle(dir / "one"))),
                           CachePolicy::kReuse, cache);
  ASSERT_TRUE(again.is_ok()) << again.status().to_string();
  EXPECT_TRUE(again->cache_hit);
  auto other = open_engine(scale_add_build(loaded(TEST_CUBIN_PLUGINS_LIBRARY, with_bundle(dir / "two"))),
                           CachePolicy::kReuse, cache);
  ASSERT_TRUE(other.is_ok()) << other.status().to_string();
  EXPECT_FALSE(other->cache_hit);
  EXPECT_NE(other->key, first->key);
  EXPECT_TRUE(contains(other->explanation, "differs in: plugins[0].bundle_manifest_sha256")) << other->explanation;
}

TEST(PluginBundle, AnEngineBuiltWithAnotherBundleIsRefusedNamingBothManifests) {
  testing::TempDir dir;
  copy_bundle_with_version(dir / "one", "1.0.0-one");
  copy_bundle_with_version(dir / "two", "1.0.0-two");
  const PluginRegistry built_with = loaded(TEST_CUBIN_PLUGINS_LIBRARY, with_bundle(dir / "one"));
  const PluginRegistry opened_with = loaded(TEST_CUBIN_PLUGINS_LIBRARY, with_bundle(dir / "two"));
  const std::string bytes = build_serialized_engine(scale_add_build(built_with)).value();
  auto engine = Engine::deserialize(bytes.data(), bytes.size(), "scale_add.engine", opened_with);
  ASSERT_FALSE(engine.is_ok());
  const std::string message = engine.status().message();
  EXPECT_TRUE(contains(message, "plugin 'test::scale_add' version 1.0.0 is loaded with a different cubin bundle")) << message;
  EXPECT_TRUE(contains(message, opened_with.libraries()[0]->bundle->manifest_sha256)) << message;
  EXPECT_TRUE(contains(message, built_with.libraries()[0]->bundle->manifest_sha256)) << message;
  // The same bundle opens it.
  EXPECT_TRUE(Engine::deserialize(bytes.data(), bytes.size(), "scale_add.engine", built_with).is_ok());
}

}  // namespace
}  // namespace tensoracle
