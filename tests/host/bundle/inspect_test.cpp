// inspect_bundle on the example bundle and on copies damaged in one way each: every damage is
// reported by the check made for it.
#include <gtest/gtest.h>

#include "host/bundle/bundle_test_util.h"
#include "tensoracle/bundle.h"

namespace tensoracle {
namespace {

using namespace tensoracle::testing;
namespace checks = bundle_checks;

InspectReport inspect(const fs::path& bundle, const InspectOptions& options = {}) {
  auto report = inspect_bundle(bundle.string(), options);
  EXPECT_TRUE(report.is_ok()) << report.status().message();
  return report.is_ok() ? *report : InspectReport{};
}

PluginDeclaration example_plugin() { return *read_plugin_declaration(TENSORACLE_SOURCE_DIR "/examples/bundle_example/plugin.json"); }

PluginDeclaration example_plugin_for(std::vector<GpuArch> architectures) {
  PluginDeclaration plugin = example_plugin();
  plugin.bundle.architectures = std::move(architectures);
  return plugin;
}

using Names = std::vector<std::string>;

TEST(InspectBundle, TheExampleBundlePassesEveryCheck) {
  const InspectReport report = inspect(example_bundle());
  EXPECT_TRUE(report.passed()) << inspect_report_to_text(report);
  // One schema check, then six per cubin (path, presence, size, hash, ELF, arch, kernels).
  EXPECT_EQ(report.checks.size(), 1u + 4u * 7u);
  EXPECT_EQ(checks_named(report, checks::kCubinArch, "sm_90/elementwise.cubin").at(0).reason, "ELF header says sm_90");
}

TEST(InspectBundle, ThePluginsKernelsExistOnEveryArchitectureItDeclares) {
  InspectOptions options;
  options.plugin = example_plugin_for({GpuArch{86}, GpuArch{90}});
  const InspectReport report = inspect(example_bundle(), options);
  EXPECT_TRUE(report.passed()) << inspect_report_to_text(report);
  EXPECT_EQ(checks_named(report, checks::kPluginArchitectures).size(), 2u);
  EXPECT_EQ(checks_named(report, checks::kPluginKernels).size(), 4u);
}

TEST(InspectBundle, WrongArchitecture_Sm86CubinFiledAsSm90) {
  ScratchDir scratch;
  const fs::path bundle = copy_example_bundle(scratch);
  replace_cubin_consistently(bundle, "sm_90/elementwise.cubin", read_bytes(bundle / "sm_86/elementwise.cubin"));
  const InspectReport report = inspect(bundle);
  EXPECT_EQ(failed_check_names(report), Names{"cubin_arch(sm_90/elementwise.cubin)"});
  EXPECT_EQ(checks_named(report, checks::kCubinArch, "sm_90/elementwise.cubin").at(0).reason,
            "ELF header says sm_86, the manifest files it as sm_90");
}

TEST(InspectBundle, HashMismatch) {
  ScratchDir scratch;
  const fs::path bundle = copy_example_bundle(scratch);
  auto manifest = read_manifest_json(bundle);
  cubin_entry(manifest, "sm_90/binary.cubin")["sha256"] = sha256_hex("something else");
  write_manifest_json(bundle, manifest);
  EXPECT_EQ(failed_check_names(inspect(bundle)), Names{"cubin_sha256(sm_90/binary.cubin)"});
}

TEST(InspectBundle, TruncatedCubin) {
  ScratchDir scratch;
  const fs::path bundle = copy_example_bundle(scratch);
  const std::string bytes = read_bytes(bundle / "sm_86/binary.cubin");
  write_bytes(bundle / "sm_86/binary.cubin", bytes.substr(0, bytes.size() / 2));
  const InspectReport report = inspect(bundle);
  const auto size = checks_named(report, checks::kCubinSize, "sm_86/binary.cubin");
  ASSERT_EQ(size.size(), 1u);
  EXPECT_FALSE(size[0].passed);
  EXPECT_EQ(size[0].reason, std::to_string(bytes.size() / 2) + " bytes, the manifest records " + std::to_string(bytes.size()));
  // A truncated file is no valid cubin either.
  EXPECT_FALSE(checks_named(report, checks::kCubinElf, "sm_86/binary.cubin").at(0).passed);
}

TEST(InspectBundle, NonElfFile) {
  ScratchDir scratch;
  const fs::path bundle = copy_example_bundle(scratch);
  replace_cubin_consistently(bundle, "sm_90/binary.cubin", "// PTX is not a cubin\n.version 9.0\n");
  const InspectReport report = inspect(bundle);
  EXPECT_EQ(failed_check_names(report), Names{"cubin_elf(sm_90/binary.cubin)"});
  EXPECT_EQ(checks_named(report, checks::kCubinElf, "sm_90/binary.cubin").at(0).reason,
            "not a valid CUDA ELF: not an ELF file");
}

TEST(InspectBundle, MissingKernel) {
  ScratchDir scratch;
  const fs::path bundle = copy_example_bundle(scratch);
  auto manifest = read_manifest_json(bundle);
  cubin_entry(manifest, "sm_86/elementwise.cubin")["kernels"].push_back("softmax");
  write_manifest_json(bundle, manifest);
  const InspectReport report = inspect(bundle);
  EXPECT_EQ(failed_check_names(report), Names{"cubin_kernels(sm_86/elementwise.cubin)"});
  EXPECT_EQ(checks_named(report, checks::kCubinKernels, "sm_86/elementwise.cubin").at(0).reason,
            "listed but not defined: softmax; the cubin defines: scale_bias");
}

TEST(InspectBundle, MissingArchitectureThePluginDeclares) {
  InspectOptions options;
  options.plugin = example_plugin();  // declares sm_80 ... sm_120; the test bundle has sm_86 and sm_90
  const InspectReport report = inspect(example_bundle(), options);
  EXPECT_EQ(failed_check_names(report),
            (Names{"plugin_architectures(sm_80)", "plugin_architectures(sm_89)", "plugin_architectures(sm_100)",
                   "plugin_architectures(sm_120)"}));
  EXPECT_EQ(checks_named(report, checks::kPluginArchitectures, "sm_80").at(0).reason,
            "example::gated_scale 1.0.0 declares sm_80, but the bundle has no cubin for it");
}

TEST(InspectBundle, KernelThePluginNeedsIsMissing) {
  InspectOptions options;
  options.plugin = example_plugin_for({GpuArch{90}});
  options.plugin->bundle.kernels.push_back("layer_norm");
  EXPECT_EQ(failed_check_names(inspect(example_bundle(), options)), Names{"plugin_kernels(sm_90/layer_norm)"});
}

class UnsafePath : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(UnsafePath, IsRejectedWithoutReadingTheFile) {
  ScratchDir scratch;
  const fs::path bundle = copy_example_bundle(scratch);
  write_bytes(scratch.path() / "outside.cubin", read_bytes(bundle / "sm_90/elementwise.cubin"));
  std::string path = GetParam().first;
  if (path == "ABSOLUTE") path = (scratch.path() / "outside.cubin").string();
  auto manifest = read_manifest_json(bundle);
  cubin_entry(manifest, "sm_90/elementwise.cubin")["path"] = path;
  write_manifest_json(bundle, manifest);
  const InspectReport report = inspect(bundle);
  EXPECT_EQ(failed_check_names(report), Names{"path_safety(" + path + ")"});
  EXPECT_EQ(checks_named(report, checks::kPathSafety, path).at(0).reason,
            std::string(GetParam().second) + "; the cubin was not read");
  EXPECT_TRUE(checks_named(report, checks::kCubinPresent, path).empty());
}

INSTANTIATE_TEST_SUITE_P(InspectBundle, UnsafePath,
                         ::testing::Values(std::pair{"../outside.cubin", "'..' component"},
                                           std::pair{"sm_90/../../outside.cubin", "'..' component"},
                                           std::pair{"ABSOLUTE", "absolute path"},
                                           std::pair{"C:/outside.cubin", "starts with a drive letter"}));

TEST(InspectBundle, SymlinkEscapingTheBundle) {
  ScratchDir scratch;
  const fs::path bundle = copy_example_bundle(scratch);
  fs::copy_file(bundle / "sm_90/elementwise.cubin", scratch.path() / "outside.cubin");
  fs::remove(bundle / "sm_90/elementwise.cubin");
  fs::create_symlink(scratch.path() / "outside.cubin", bundle / "sm_90/elementwise.cubin");
  const InspectReport report = inspect(bundle);
  EXPECT_EQ(failed_check_names(report), Names{"path_safety(sm_90/elementwise.cubin)"});
  EXPECT_NE(checks_named(report, checks::kPathSafety, "sm_90/elementwise.cubin").at(0).reason.find(
                "a symlink leads outside the bundle"),
            std::string::npos);
}

TEST(InspectBundle, SymlinkedDirectoryEscapingTheBundle) {
  ScratchDir scratch;
  const fs::path bundle = copy_example_bundle(scratch);
  fs::rename(bundle / "sm_86", scratch.path() / "elsewhere");
  fs::create_directory_symlink(scratch.path() / "elsewhere", bundle / "sm_86");
  EXPECT_EQ(failed_check_names(inspect(bundle)),
            (Names{"path_safety(sm_86/elementwise.cubin)", "path_safety(sm_86/binary.cubin)"}));
}

TEST(InspectBundle, SymlinkStayingInsideTheBundleIsFine) {
  ScratchDir scratch;
  const fs::path bundle = copy_example_bundle(scratch);
  fs::rename(bundle / "sm_90/binary.cubin", bundle / "binary-sm90.cubin");
  fs::create_symlink("../binary-sm90.cubin", bundle / "sm_90/binary.cubin");
  EXPECT_TRUE(inspect(bundle).passed());
}

TEST(InspectBundle, MissingCubinAndMissingManifest) {
  ScratchDir scratch;
  const fs::path bundle = copy_example_bundle(scratch);
  fs::remove(bundle / "sm_86/elementwise.cubin");
  EXPECT_EQ(failed_check_names(inspect(bundle)), Names{"cubin_present(sm_86/elementwise.cubin)"});
  fs::remove(bundle / "manifest.json");
  EXPECT_EQ(failed_check_names(inspect(bundle)), Names{"manifest_schema(manifest.json)"});
}

TEST(InspectBundle, BadManifestStopsAtTheSchemaCheck) {
  ScratchDir scratch;
  const fs::path bundle = copy_example_bundle(scratch);
  auto manifest = read_manifest_json(bundle);
  manifest["format_version"] = 7;
  write_manifest_json(bundle, manifest);
  const InspectReport report = inspect(bundle);
  ASSERT_EQ(report.checks.size(), 1u);
  EXPECT_EQ(report.checks[0].reason, "manifest.json: /format_version: format version 7 is not supported (this tensoracle reads version 1)");
}

TEST(InspectBundle, ADirectoryThatDoesNotExistIsAnErrorNotAReport) {
  EXPECT_EQ(inspect_bundle("/nonexistent/bundle").status().code(), StatusCode::kNotFound);
}

TEST(InspectReport, JsonCarriesEveryCheck) {
  const InspectReport report = inspect(example_bundle());
  const auto json = nlohmann::json::parse(inspect_report_to_json(report));
  EXPECT_EQ(json["passed"], true);
  ASSERT_EQ(json["checks"].size(), report.checks.size());
  EXPECT_EQ(json["checks"][0]["check"], "manifest_schema");
  EXPECT_EQ(json["checks"][0]["subject"], "manifest.json");
}

}  // namespace
}  // namespace tensoracle
