// `tensoracle bundle ...` exit statuses: 0 all checks pass, 1 some failed, 2 usage or input error.
#include <gtest/gtest.h>

#include "host/bundle/bundle_test_util.h"
#include "host/cli_run.h"

namespace tensoracle {
namespace {

using namespace tensoracle::testing;

std::string quoted(const std::string& text) { return "'" + text + "'"; }
const std::string kExample = TENSORACLE_SOURCE_DIR "/examples/bundle_example";

TEST(BundleCli, CompileThenInspect) {
  ScratchDir scratch;
  const CliRun compile = run_cli("bundle compile --name ex --version 1 --src " + quoted(kExample + "/kernels/binary.cu") +
                              " --arch sm_90 --out " + quoted(scratch / "b") + " -- -lineinfo");
  ASSERT_EQ(compile.exit_code, 0) << compile.output;
  EXPECT_NE(compile.output.find("sm_90/binary.cubin"), std::string::npos) << compile.output;
  EXPECT_EQ(read_bundle_manifest(scratch / "b")->compiler.flags, (std::vector<std::string>{"-cubin", "-lineinfo"}));

  const CliRun inspect = run_cli("bundle inspect " + quoted(scratch / "b"));
  EXPECT_EQ(inspect.exit_code, 0) << inspect.output;
  EXPECT_NE(inspect.output.find("PASS cubin_arch"), std::string::npos) << inspect.output;
}

TEST(BundleCli, InspectJsonAndPlugin) {
  const CliRun run = run_cli("bundle inspect --json " + quoted(example_bundle().string()));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const auto json = nlohmann::json::parse(run.output);
  EXPECT_EQ(json["passed"], true);
  // The example declaration names architectures the test bundle lacks.
  const CliRun with_plugin =
      run_cli("bundle inspect --plugin " + quoted(kExample + "/plugin.json") + " " + quoted(example_bundle().string()));
  EXPECT_EQ(with_plugin.exit_code, 1) << with_plugin.output;
  EXPECT_NE(with_plugin.output.find("FAIL plugin_architectures  sm_80"), std::string::npos) << with_plugin.output;
}

TEST(BundleCli, FailedCheckExitsOne) {
  ScratchDir scratch;
  const fs::path bundle = copy_example_bundle(scratch);
  write_bytes(bundle / "sm_90/binary.cubin", "garbage");
  EXPECT_EQ(run_cli("bundle inspect " + quoted(bundle.string())).exit_code, 1);
  write_bytes(scratch.path() / "bad.whl", "not a zip");
  EXPECT_EQ(run_cli("bundle inspect-wheel " + quoted(scratch / "bad.whl")).exit_code, 1);
}

TEST(BundleCli, UsageAndInputErrorsExitTwo) {
  ScratchDir scratch;
  EXPECT_EQ(run_cli("bundle inspect /nonexistent/bundle").exit_code, 2);
  EXPECT_EQ(run_cli("bundle inspect-wheel /nonexistent/w.whl").exit_code, 2);
  EXPECT_EQ(run_cli("bundle inspect").exit_code, 2);
  write_bytes(scratch.path() / "decl.json", "{\"name\": \"p\"}");
  EXPECT_EQ(run_cli("bundle inspect --plugin " + quoted(scratch / "decl.json") + " " +
                    quoted(example_bundle().string()))
                .exit_code,
            2);
  const CliRun bad_arch = run_cli("bundle compile --name a --version 1 --src " + quoted(kExample + "/kernels/binary.cu") +
                               " --arch sm_50 --out " + quoted(scratch / "b"));
  EXPECT_EQ(bad_arch.exit_code, 2);
  EXPECT_NE(bad_arch.output.find("cannot compile for sm_50"), std::string::npos) << bad_arch.output;
  EXPECT_EQ(run_cli("bundle compile --name a --version 1 --src x.cu --arch ninety --out " + quoted(scratch / "c"))
                .exit_code,
            2);
  EXPECT_FALSE(fs::exists(scratch.path() / "b"));
}

// Manifests and declarations are untrusted. A manifest nested 3 million levels deep once
// crashed `bundle inspect` (SIGSEGV); a NUL in a cubin path cut the message short. A bad manifest is
// a failed check (exit 1, the report says why); a bad --plugin declaration is bad input (exit 2).
TEST(BundleCli, HostileManifestsAreReportedNotCrashedOn) {
  ScratchDir scratch;
  const fs::path bundle = copy_example_bundle(scratch);
  write_bytes(bundle / "manifest.json", std::string(3000000, '[') + std::string(3000000, ']'));
  const CliRun deep = run_cli("bundle inspect " + quoted(bundle.string()));
  EXPECT_EQ(deep.exit_code, 1) << deep.output;
  EXPECT_NE(deep.output.find("nesting is deeper than 64 levels"), std::string::npos) << deep.output;

  std::string manifest = read_bytes(example_bundle() / "manifest.json");
  const size_t path = manifest.find("\"path\": \"") + 9;
  manifest.insert(path, "..\\u0000/");
  write_bytes(bundle / "manifest.json", manifest);
  const CliRun nul = run_cli("bundle inspect " + quoted(bundle.string()));
  EXPECT_EQ(nul.exit_code, 1) << nul.output;
  EXPECT_NE(nul.output.find("holds a NUL byte"), std::string::npos) << nul.output;
  EXPECT_NE(nul.output.find("..\\x00/"), std::string::npos) << nul.output;

  write_bytes(scratch.path() / "deep.json", std::string(100000, '['));
  const CliRun declaration =
      run_cli("bundle inspect --plugin " + quoted(scratch / "deep.json") + " " + quoted(example_bundle().string()));
  EXPECT_EQ(declaration.exit_code, 2) << declaration.output;
  EXPECT_NE(declaration.output.find("nesting is deeper than 64 levels"), std::string::npos) << declaration.output;
}

}  // namespace
}  // namespace tensoracle
