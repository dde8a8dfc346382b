// `tensoracle build|run --plugin LIB`: a package graph with a plugin layer built through the cache,
// its engine run with the library and refused without it; a missing library is bad usage.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "host/cli_run.h"
#include "host/cache/cache_testing.h"
#include "tensoracle/npy.h"
#include "tensoracle/safetensors.h"

namespace tensoracle {
namespace {

using testing::run_command;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class PluginCli : public ::testing::Test {
 protected:
  void SetUp() override {
    x_ = HostArray::zeros(DataType::kFloat32, {2, 4}).value();
    b_ = HostArray::zeros(DataType::kFloat32, {2, 4}).value();
    for (int64_t i = 0; i < 8; ++i) {
      x_.data_as<float>()[i] = 0.5f * static_cast<float>(i) - 1.5f;
      b_.data_as<float>()[i] = 0.25f * static_cast<float>(i % 3);
    }
    ASSERT_TRUE(write_safetensors(dir_ / "weights.safetensors", {{"b", b_.view()}}).is_ok());
    ASSERT_TRUE(write_npz(dir_ / "inputs.npz", {{"x", x_.view()}}).is_ok());
  }

  // `tensoracle ARGUMENTS` with this test's cache, stderr joined to stdout.
  testing::CliRun cli(const std::string& arguments) {
    return run_command("TENSORACLE_CACHE_DIR=" + (dir_ / "cache") + " " + std::string(TENSORACLE_CLI_PATH) + " " +
                       arguments + " 2>&1");
  }
  std::string build_args() const {
    return std::string("--package ") + TEST_PLUGIN_PACKAGE + " --weights " + (dir_ / "weights.safetensors") + " --quiet";
  }

  testing::TempDir dir_;
  HostArray x_, b_;
};

TEST_F(PluginCli, BuildsWithThePluginAndRunsTheEngineFileWithIt) {
  const testing::CliRun built = cli("build " + build_args() + " --plugin " + TEST_PLUGINS_LIBRARY + " --json");
  ASSERT_EQ(built.exit_code, 0) << built.output;
  const std::string engine = nlohmann::json::parse(built.output)["engine_path"].get<std::string>();

  const testing::CliRun ran = cli("run --engine " + engine + " --plugin " + TEST_PLUGINS_LIBRARY + " --inputs " +
                                  (dir_ / "inputs.npz") + " --outputs " + (dir_ / "outputs.npz"));
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  auto outputs = read_npz(dir_ / "outputs.npz");
  ASSERT_TRUE(outputs.is_ok()) << outputs.status().to_string();
  const HostArray& y = outputs->at("y");
  ASSERT_EQ(y.shape(), (Dims{2, 4}));
  for (int64_t i = 0; i < 8; ++i)
    EXPECT_EQ(y.data_as<float>()[i], std::max(0.0f, x_.data_as<float>()[i] * 2.5f + b_.data_as<float>()[i])) << i;

  const testing::CliRun refused =
      cli("run --engine " + engine + " --inputs " + (dir_ / "inputs.npz") + " --outputs " + (dir_ / "refused.npz"));
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_TRUE(contains(refused.output, "needs plugin 'test::scale_add' version 1.0.0, which is not loaded")) << refused.output;
  EXPECT_TRUE(contains(refused.output, "libtensoracle_test_plugins.so")) << refused.output;
}

TEST_F(PluginCli, AGraphWhosePluginIsNotLoadedFailsTheBuildNamingIt) {
  const testing::CliRun built = cli("build " + build_args());
  EXPECT_EQ(built.exit_code, 1) << built.output;
  EXPECT_TRUE(contains(built.output, "layer 'scale_add' (plugin): plugin 'test::scale_add' version 1.0.0 is not loaded"))
      << built.output;
}

TEST_F(PluginCli, AMissingOrBrokenLibraryIsBadUsageNamingIt) {
  const testing::CliRun missing = cli("build " + build_args() + " --plugin " + (dir_ / "libnothing.so"));
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_TRUE(contains(missing.output, "--plugin: plugin library '" + (dir_ / "libnothing.so") + "' does not exist"))
      << missing.output;
  const testing::CliRun not_plugin = cli("build " + build_args() + " --plugin " + TEST_NOT_A_PLUGIN_LIBRARY);
  EXPECT_EQ(not_plugin.exit_code, 2) << not_plugin.output;
  EXPECT_TRUE(contains(not_plugin.output, "has no entry point 'tensoracle_register_plugins_v1'")) << not_plugin.output;
}

// `bundle inspect DIR --plugin LIB`: the kernels each of the library's plugins declares
// (PluginCreator::bundle), on each architecture it declares, against the bundle built beside it by
// tensoracle_add_cubin_plugin.
TEST_F(PluginCli, BundleInspectPassesALibraryWhoseDeclaredKernelsAreAllInItsBundle) {
  const testing::CliRun inspected =
      cli(std::string("bundle inspect ") + TEST_CUBIN_PLUGINS_BUNDLE + " --plugin " + TEST_CUBIN_PLUGINS_LIBRARY + " --json");
  ASSERT_EQ(inspected.exit_code, 0) << inspected.output;
  const nlohmann::json report = nlohmann::json::parse(inspected.output);
  std::vector<std::string> plugin_checks;
  for (const nlohmann::json& check : report["checks"]) {
    const std::string name = check["check"].get<std::string>();
    if (name == "plugin_architectures" || name == "plugin_kernels")
      plugin_checks.push_back(name + " " + check["subject"].get<std::string>());
  }
  EXPECT_EQ(plugin_checks, (std::vector<std::string>{"plugin_architectures test::scale_add/sm_90",
                                                     "plugin_kernels test::scale_add/sm_90/scale_add",
                                                     "plugin_architectures test::scale_add/sm_80",
                                                     "plugin_kernels test::scale_add/sm_80/scale_add"}));
}

TEST_F(PluginCli, BundleInspectFailsALibraryThatNeedsAKernelItsBundleLacksNamingIt) {
  const testing::CliRun inspected = cli(std::string("bundle inspect ") + TEST_CUBIN_PLUGINS_BUNDLE + " --plugin " +
                                        TEST_CUBIN_PLUGINS_MISSING_LIBRARY);
  EXPECT_EQ(inspected.exit_code, 1) << inspected.output;
  EXPECT_TRUE(contains(inspected.output,
                       "test::scale_add 1.0.0 needs kernel 'layer_norm', but no readable sm_90 cubin defines it"))
      << inspected.output;
  // The kernel the bundle has still passes: only the missing one fails.
  EXPECT_TRUE(contains(inspected.output, "PASS plugin_kernels")) << inspected.output;
}

TEST_F(PluginCli, BundleInspectRefusesALibraryWhosePluginsNeedNoKernels) {
  const testing::CliRun inspected =
      cli(std::string("bundle inspect ") + TEST_CUBIN_PLUGINS_BUNDLE + " --plugin " + TEST_PLUGINS_LIBRARY);
  EXPECT_EQ(inspected.exit_code, 2) << inspected.output;
  EXPECT_TRUE(contains(inspected.output, "registers no plugin that needs bundle kernels")) << inspected.output;
}

// `--plugin LIB:BUNDLE_DIR` names the library's cubin bundle; plain `--plugin LIB` finds
// <NAME>_bundle beside lib<NAME>.so.
TEST_F(PluginCli, PluginLibColonBundleDirLoadsTheLibraryWithThatBundle) {
  const std::string library = dir_ / "libalone.so";  // no bundle beside it
  std::filesystem::copy_file(TEST_CUBIN_PLUGINS_LIBRARY, library);
  const testing::CliRun with_bundle = cli("build " + build_args() + " --plugin " + library + ":" + TEST_CUBIN_PLUGINS_BUNDLE);
  EXPECT_EQ(with_bundle.exit_code, 0) << with_bundle.output;
  const testing::CliRun beside = cli("build " + build_args() + " --plugin " + TEST_CUBIN_PLUGINS_LIBRARY);
  EXPECT_EQ(beside.exit_code, 0) << beside.output;

  const testing::CliRun without = cli("build " + build_args() + " --plugin " + library);
  EXPECT_EQ(without.exit_code, 2) << without.output;
  EXPECT_TRUE(contains(without.output, "--plugin: plugin library '" + library + "': its cubin bundle '" +
                                           (dir_ / "alone_bundle") + "' does not exist"))
      << without.output;
}

TEST_F(PluginCli, PluginLibColonBundleDirRefusesABundleThatLacksADeclaredKernel) {
  const testing::CliRun run = cli("build " + build_args() + " --plugin " + TEST_CUBIN_PLUGINS_MISSING_LIBRARY + ":" +
                                  TEST_CUBIN_PLUGINS_BUNDLE);
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_TRUE(contains(run.output, "needs kernel 'layer_norm'")) << run.output;
}

TEST_F(PluginCli, TheHelpDocumentsTheBundleForm) {
  const testing::CliRun help = cli("build --help");
  EXPECT_EQ(help.exit_code, 0) << help.output;
  EXPECT_TRUE(contains(help.output, "LIB[:BUNDLE_DIR]")) << help.output;
  EXPECT_TRUE(contains(help.output, "<NAME>_bundle beside lib<NAME>.so")) << help.output;
}

}  // namespace
}  // namespace tensoracle
