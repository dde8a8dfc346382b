// `tensoracle build|run --plugin libtensoracle_plugins.so` on the deformable example's plugin
// graph (examples/deformable): the engine file records tensoracle::dcnv2 with its parameters, runs
// with the library to PyTorch's output (rel L2 <= 1e-6, the fixture of
// scripts/gen-deformable-references.py), and is refused without it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "host/cache/cache_testing.h"
#include "host/cli_run.h"
#include "tensoracle/compare.h"
#include "tensoracle/safetensors.h"

namespace tensoracle {
namespace {

TEST(Dcnv2Cli, TheDeformableExamplesPluginGraphBuildsAndRunsFromItsEngineFile) {
  testing::TempDir dir;
  const std::string io = std::string(TENSORACLE_FIXTURES_DIR) + "/examples/deformable/io.safetensors";
  const auto cli = [&](const std::string& arguments) {
    return testing::run_command("TENSORACLE_CACHE_DIR=" + (dir / "cache") + " " + std::string(TENSORACLE_CLI_PATH) + " " +
                                arguments + " 2>&1");
  };
  const testing::CliRun built = cli(std::string("build --package ") + TENSORACLE_DEFORMABLE_PACKAGE +
                                    " --graph deformable_plugin --plugin " + TENSORACLE_PLUGINS_LIBRARY + " --quiet --json");
  ASSERT_EQ(built.exit_code, 0) << built.output;
  const std::string engine = nlohmann::json::parse(built.output)["engine_path"].get<std::string>();

  const testing::CliRun ran = cli("run --engine " + engine + " --plugin " + TENSORACLE_PLUGINS_LIBRARY + " --inputs " + io +
                                  " --outputs " + (dir / "out.safetensors"));
  ASSERT_EQ(ran.exit_code, 0) << ran.output;
  auto got = Weights::open(dir / "out.safetensors");
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  auto reference = Weights::open(io);
  ASSERT_TRUE(reference.is_ok()) << reference.status().to_string();
  auto cmp = compare_outputs(got->view("out").value(), reference->view("out").value());
  ASSERT_TRUE(cmp.is_ok()) << cmp.status().to_string();
  EXPECT_LE(cmp->rel_l2_error, 1e-6);

  const testing::CliRun refused = cli("run --engine " + engine + " --inputs " + io + " --outputs " + (dir / "again.safetensors"));
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.output.find("needs plugin 'tensoracle::dcnv2' version 1.0.0, which is not loaded"), std::string::npos)
      << refused.output;
  EXPECT_NE(refused.output.find("libtensoracle_plugins.so"), std::string::npos) << refused.output;
}

}  // namespace
}  // namespace tensoracle
