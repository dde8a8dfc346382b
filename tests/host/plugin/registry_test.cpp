// Plugin libraries and the registry: what loading accepts and refuses, with which message, and
// that every call into a plugin is guarded.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "host/plugin/plugin_testing.h"
#include "tensoracle/hashing.h"

namespace tensoracle {
namespace {

using testing::test_plugins;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(PluginLibrary, LoadsRegistersEveryPluginAndRecordsTheLibrarysSha256) {
  PluginRegistry registry = test_plugins();
  ASSERT_EQ(registry.libraries().size(), 1u);
  const PluginLibrary& library = *registry.libraries()[0];
  EXPECT_EQ(library.sha256, sha256_file_hex(TEST_PLUGINS_LIBRARY).value());
  EXPECT_EQ(library.file_name, std::filesystem::path(TEST_PLUGINS_LIBRARY).filename().string());
  EXPECT_EQ(library.plugins, (std::vector<std::string>{"test::scale_add 1.0.0", "test::flatten 1.0.0",
                                                       "test::misbehave 1.0.0", "test::gpu_only 1.0.0"}));
  auto found = registry.find("test::scale_add", "1.0.0");
  ASSERT_TRUE(found.is_ok()) << found.status().to_string();
  const PluginFingerprint fingerprint = (*found)->fingerprint();
  EXPECT_EQ(fingerprint.name, "test::scale_add");
  EXPECT_EQ(fingerprint.version, "1.0.0");
  EXPECT_EQ(fingerprint.library_sha256, library.sha256);
  EXPECT_EQ(fingerprint.library, library.file_name);
}

TEST(PluginLibrary, AMissingFileIsNotFoundNamingIt) {
  PluginRegistry registry;
  const Status status = registry.load_library("/nonexistent/libnothing.so");
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_TRUE(contains(status.message(), "plugin library '/nonexistent/libnothing.so' does not exist")) << status.message();
  EXPECT_TRUE(registry.empty());
}

TEST(PluginLibrary, AFileThatIsNotASharedObjectGetsDlopensReason) {
  const std::string path = ::testing::TempDir() + "/not_elf.so";
  std::ofstream(path) << "this is text, not ELF";
  PluginRegistry registry;
  const Status status = registry.load_library(path);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(status.message(), "cannot be loaded")) << status.message();
  EXPECT_TRUE(contains(status.message(), path)) << status.message();
}

TEST(PluginLibrary, ALibraryWithoutTheEntryPointIsRefusedNamingTheSymbol) {
  PluginRegistry registry;
  const Status status = registry.load_library(TEST_NOT_A_PLUGIN_LIBRARY);
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_TRUE(contains(status.message(), "has no entry point 'tensoracle_register_plugins_v1'")) << status.message();
  EXPECT_TRUE(registry.empty());
}

TEST(PluginLibrary, AVersion2LibraryIsRefusedNamingBothInterfaceVersions) {
  PluginRegistry registry;
  const Status status = registry.load_library(TEST_PLUGINS_BAD_ABI_LIBRARY);
  EXPECT_EQ(status.code(), StatusCode::kUnsupported);
  EXPECT_TRUE(contains(status.message(), "built against plugin interface version 2; this tensoracle has version 3"))
      << status.message();
  EXPECT_TRUE(registry.empty());
}

TEST(PluginLibrary, APluginRegisteredTwiceIsRefusedNamingBothLibrariesAndNothingIsAdded) {
  // The same library under another path registers the same identities.
  const std::string copy = ::testing::TempDir() + "/libcopy_of_test_plugins.so";
  std::filesystem::copy_file(TEST_PLUGINS_LIBRARY, copy, std::filesystem::copy_options::overwrite_existing);
  PluginRegistry registry = test_plugins();
  const Status status = registry.load_library(copy);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(status.message(), "plugin 'test::scale_add 1.0.0' is registered twice")) << status.message();
  EXPECT_TRUE(contains(status.message(), TEST_PLUGINS_LIBRARY)) << status.message();
  EXPECT_TRUE(contains(status.message(), copy)) << status.message();
  EXPECT_EQ(registry.libraries().size(), 1u);
  EXPECT_EQ(registry.plugins().size(), 4u);
}

TEST(PluginLibrary, TwoVersionsOfOnePluginMayBeLoadedSideBySide) {
  PluginRegistry registry = test_plugins();
  // The v2 library also registers flatten, misbehave and gpu_only at 1.0.0: refused as duplicates.
  EXPECT_FALSE(registry.load_library(TEST_PLUGINS_V2_LIBRARY).is_ok());
  PluginRegistry v2 = test_plugins(TEST_PLUGINS_V2_LIBRARY);
  auto found = v2.find("test::scale_add", "1.0.0");
  ASSERT_FALSE(found.is_ok());
  EXPECT_EQ(found.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(contains(found.status().message(), "plugin 'test::scale_add' version 1.0.0 is not loaded; loaded versions: 2.0.0"))
      << found.status().message();
}

TEST(PluginRegistry, AnUnknownPluginIsNotFoundListingWhatIsLoaded) {
  PluginRegistry registry = test_plugins();
  auto found = registry.find("example::dcn", "1");
  ASSERT_FALSE(found.is_ok());
  EXPECT_TRUE(contains(found.status().message(), "plugin 'example::dcn' version 1 is not loaded")) << found.status().message();
  EXPECT_TRUE(contains(found.status().message(), "loaded: test::scale_add 1.0.0, test::flatten 1.0.0")) << found.status().message();
  EXPECT_TRUE(contains(PluginRegistry().find("a", "1").status().message(), "no plugins are loaded"));
}

TEST(PluginRegistry, InProcessCreatorsAreCheckedAndHaveNoLibrary) {
  PluginRegistry registry;
  EXPECT_FALSE(registry.add({{"bad name!", "1", ""}, [](std::string_view) -> Result<std::unique_ptr<Plugin>> {
                               return Status(StatusCode::kInternal, "unused");
                             }}).is_ok());
  EXPECT_FALSE(registry.add({{"no_factory", "1", ""}, nullptr}).is_ok());
  ASSERT_TRUE(registry.add({{"local", "1", ""}, [](std::string_view) -> Result<std::unique_ptr<Plugin>> {
                              return std::unique_ptr<Plugin>();
                            }}).is_ok());
  const std::vector<PluginFingerprint> fingerprints = registry.fingerprints();
  ASSERT_EQ(fingerprints.size(), 1u);
  EXPECT_EQ(fingerprints[0].name, "local");
  EXPECT_TRUE(fingerprints[0].library.empty());
  EXPECT_TRUE(fingerprints[0].library_sha256.empty());
  // A creator that returns neither a plugin nor an error is refused, naming the plugin.
  auto made = create_plugin(**registry.find("local", "1"), "");
  ASSERT_FALSE(made.is_ok());
  EXPECT_TRUE(contains(made.status().message(), "plugin 'local 1' create: returned no plugin")) << made.status().message();
}

// A plugin that needs `needs` from its cubin bundle, whatever its creator was registered with.
class NeedsKernels final : public Plugin {
 public:
  explicit NeedsKernels(PluginKernels needs) : needs_(std::move(needs)) {}
  PluginDeclaration declaration() const override {
    return {{"needs", "1", ""},
            {{PluginInput{"x", {TypeFormat{}}}}, {PluginOutput{"y", TypeFormat{}, OutputShapeRule::copy_input(0)}}},
            needs_};
  }
  std::string parameters() const override { return {}; }
  Status configure(const std::vector<PluginTensorDesc>&, const std::vector<PluginTensorDesc>&) override {
    return Status::ok();
  }
  Status enqueue(const PluginBuffers&, void*, void*) noexcept override { return Status::ok(); }

 private:
  PluginKernels needs_;
};

PluginFactory makes_plugin_needing(PluginKernels needs) {
  return [needs](std::string_view) -> Result<std::unique_ptr<Plugin>> { return std::unique_ptr<Plugin>(new NeedsKernels(needs)); };
}

TEST(PluginRegistry, APluginMustNeedTheBundleKernelsItsCreatorWasRegisteredWith) {
  const PluginKernels scale_bias{{"scale_bias"}, {GpuArch{90}}};
  // `bundle inspect --plugin LIB` checks the creator's needs: a plugin needing more would pass it.
  PluginRegistry understated;
  ASSERT_TRUE(understated.add({{"needs", "1", ""}, makes_plugin_needing(scale_bias), PluginKernels{}}).is_ok());
  auto refused = create_plugin(**understated.find("needs", "1"), "");
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().message(),
            "plugin 'needs 1' create: made a plugin that declares kernels [scale_bias] on [sm_90], but it was "
            "registered with no bundle kernels");

  PluginRegistry stated;
  ASSERT_TRUE(stated.add({{"needs", "1", ""}, makes_plugin_needing(scale_bias), scale_bias}).is_ok());
  auto made = create_plugin(**stated.find("needs", "1"), "");
  EXPECT_TRUE(made.is_ok()) << made.status().to_string();
}

TEST(PluginRegistry, ACreatorsBundleNeedsFollowTheDeclarationRules) {
  PluginRegistry registry;
  const Status status =
      registry.add({{"needs", "1", ""}, makes_plugin_needing({}), PluginKernels{{"scale_bias"}, {}}});
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(status.message(), "kernels are listed but no architectures")) << status.message();
  EXPECT_TRUE(registry.empty());
}

TEST(PluginCalls, ACreatorThatThrowsOrFailsBecomesAStatusNamingThePlugin) {
  PluginRegistry registry = test_plugins();
  const RegisteredPlugin& misbehave = **registry.find("test::misbehave", "1.0.0");
  auto thrown = create_plugin(misbehave, "throw_create");
  ASSERT_FALSE(thrown.is_ok());
  EXPECT_EQ(thrown.status().code(), StatusCode::kInternal);
  EXPECT_TRUE(contains(thrown.status().message(), "plugin 'test::misbehave 1.0.0' create: threw an exception")) << thrown.status().message();
  EXPECT_TRUE(contains(thrown.status().message(), "create exploded")) << thrown.status().message();
  auto failed = create_plugin(misbehave, "fail_create");
  ASSERT_FALSE(failed.is_ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(failed.status().message(), "plugin 'test::misbehave 1.0.0' create: cannot make one of those");
  auto bad_parameters = create_plugin(**registry.find("test::scale_add", "1.0.0"), "xy");
  ASSERT_FALSE(bad_parameters.is_ok());
  EXPECT_TRUE(contains(bad_parameters.status().message(), "parameters must be one float (4 bytes), got 2 bytes"));
}

}  // namespace
}  // namespace tensoracle
