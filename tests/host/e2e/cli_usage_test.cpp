// What a new user meets first: unknown commands named with the nearest one, `help`, one JSON
// object on stdout for every --json failure, package descriptions, environment variables that
// are set wrongly, and messages that read as sentences.
#include <gtest/gtest.h>

#include <filesystem>

#include "host/e2e/cli_testing.h"

namespace tensoracle {
namespace {

using namespace testing;  // NOLINT: the harness

using UsageCli = CliTest;

TEST_F(UsageCli, UnknownCommandsAreNamedWithTheNearestOne) {
  const CliRun typo = cli("biuld");
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.output.find("error: unknown command 'biuld' for 'tensoracle'; did you mean 'build'?"),
            std::string::npos)
      << typo.output;
  const CliRun absent = cli("frobnicate");
  EXPECT_EQ(absent.exit_code, 2);
  EXPECT_NE(absent.output.find("unknown command 'frobnicate' for 'tensoracle' (commands: build, run, compare"),
            std::string::npos)
      << absent.output;
  EXPECT_EQ(absent.output.find("did you mean"), std::string::npos) << "nothing is near: " << absent.output;
  const CliRun nested = cli("cache lsit");
  EXPECT_NE(nested.output.find("unknown command 'lsit' for 'tensoracle cache'; did you mean 'list'?"), std::string::npos)
      << nested.output;
  const CliRun group = cli("cache");
  EXPECT_EQ(group.exit_code, 2);
  EXPECT_NE(group.output.find("'tensoracle cache' needs a command: list, info, verify, prune, clear"), std::string::npos)
      << group.output;
  EXPECT_EQ(cli("").exit_code, 2);
  EXPECT_EQ(cli("").output.find("A subcommand is required"), std::string::npos);
}

TEST_F(UsageCli, HelpDescribesTheToolOrACommand) {
  const CliRun top = cli("help");
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_NE(top.output.find("Usage: tensoracle [OPTIONS] SUBCOMMAND"), std::string::npos) << top.output;
  EXPECT_NE(top.output.find("compare"), std::string::npos) << top.output;
  const CliRun prune = cli("help cache prune");
  EXPECT_EQ(prune.exit_code, 0);
  EXPECT_NE(prune.output.find("Usage: tensoracle cache prune [OPTIONS]"), std::string::npos) << prune.output;
  EXPECT_NE(prune.output.find("--max-size"), std::string::npos) << prune.output;
  const CliRun unknown = cli("help biuld");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.output.find("did you mean 'build'?"), std::string::npos) << unknown.output;
}

// Every --json failure prints exactly one JSON object on stdout, whether the command, the
// library or the command-line parser found the fault.
TEST_F(UsageCli, EveryJsonFailureIsOneJsonObject) {
  const std::vector<std::pair<std::string, int>> failures = {
      {"build --json", 2},                                                      // CLI11: --package is required
      {"build --json --package " + work_ / "nope.so", 2},                       // the package cannot be loaded
      {"build --json --package " + kTinynet.package + " --policy require-cached", 1},  // the cache refuses
      {"build --json --package " + kTinynet.package + " --backend tpu", 2},     // CLI11: not a choice
      {"cache info --json 0123", 2},                                           // no such key
      {"inspect --json " + work_ / "nope.engine", 2},
      {"bundle inspect --json " + kTinynet.package, 2},                        // not a bundle directory
      {"package info --json " + work_ / "nope.so", 2},
      {"compare --json " + fixture(kTinynet), 2},                              // REFERENCE missing
      {"bench --json --engine " + work_ / "nope.engine", 2},
      {"optimize --json " + work_ / "nope.toml", 2},
  };
  for (const auto& [arguments, code] : failures) {
    const CliRun run = cli(arguments, false);
    EXPECT_EQ(run.exit_code, code) << arguments;
    const json out = json::parse(run.output, nullptr, false);
    ASSERT_FALSE(out.is_discarded()) << arguments << " printed: " << run.output;
    EXPECT_EQ(out["ok"], false) << arguments;
    EXPECT_EQ(out["exit_code"], code) << arguments;
    EXPECT_FALSE(out["error"].get<std::string>().empty()) << arguments;
  }
}

TEST_F(UsageCli, PackageInfoListsGraphsAndBuildNamesThemWhenItChoosesOne) {
  // No --graph: the first graph, and a note naming the others (resnet50 has no default weights).
  const CliRun several = cli("build --package " + std::string(RESNET50_PACKAGE));
  EXPECT_NE(several.output.find("note: package '" + std::string(RESNET50_PACKAGE) +
                                "' has 7 graphs (resnet50, resnet50_fp16, resnet50_bf16, resnet50_int8, resnet50_fp8, "
                                "resnet50_int8_fp16, resnet50_fp8_fp16); using the first, 'resnet50'"),
            std::string::npos)
      << several.output;

  const CliRun info = cli("package info --json " + std::string(RESNET50_PACKAGE), false);
  ASSERT_EQ(info.exit_code, 0) << info.output;
  const json described = json::parse(info.output);
  EXPECT_EQ(described["name"], "resnet50");
  ASSERT_EQ(described["graphs"].size(), 7u);
  const json& fp16 = described["graphs"][1];
  EXPECT_EQ(fp16["name"], "resnet50_fp16");
  EXPECT_EQ(fp16["graph_version"], "1");
  EXPECT_NE(fp16["description"].get<std::string>().find("fp16 layers"), std::string::npos);
  EXPECT_EQ(fp16["default_inputs"][0]["name"], "image");
  EXPECT_EQ(fp16["default_inputs"][0]["profiles"][0]["max"], json({32, 3, 224, 224}));

  const CliRun text = cli("package info " + kTinynet.package);
  EXPECT_EQ(text.exit_code, 0);
  EXPECT_NE(text.output.find("input:   image:1x3x16x16:2x3x16x16:8x3x32x32"), std::string::npos) << text.output;
  const CliRun one = cli("package info " + kTinyTransformer.package);
  EXPECT_NE(one.output.find("package tiny_transformer (" + kTinyTransformer.package + "): 1 graph\n"), std::string::npos)
      << one.output;
  EXPECT_NE(one.output.find("input:   tokens:2x8\n"), std::string::npos) << one.output;
}

TEST_F(UsageCli, CacheVariablesSetWronglyAreErrorsNamingThem) {
  const CliRun empty_dir = cli("build --package " + kTinynet.package, true, "TENSORACLE_CACHE_DIR=");
  EXPECT_EQ(empty_dir.exit_code, 2);
  EXPECT_NE(empty_dir.output.find("$TENSORACLE_CACHE_DIR is set but empty"), std::string::npos) << empty_dir.output;
  const CliRun bad_size = cli("cache list", true, "TENSORACLE_CACHE_MAX_SIZE=abc");
  EXPECT_EQ(bad_size.exit_code, 2);
  EXPECT_NE(bad_size.output.find("$TENSORACLE_CACHE_MAX_SIZE: 'abc' is not a size"), std::string::npos) << bad_size.output;
  const CliRun build = cli("build --package " + kTinynet.package, true, "TENSORACLE_CACHE_MAX_SIZE=abc");
  EXPECT_EQ(build.exit_code, 2);
  EXPECT_NE(build.output.find("'abc' is not a size"), std::string::npos) << build.output;
}

TEST_F(UsageCli, MessagesCountInTheSingularAndSizesAgree) {
  json built = build_json(kTinynet);
  const CliRun list = cli("cache list");
  EXPECT_NE(list.output.find(": 1 engine, "), std::string::npos) << list.output;
  const CliRun verify = cli("cache verify");
  EXPECT_NE(verify.output.find("1 engine checked in"), std::string::npos) << verify.output;
  const json listed = json::parse(cli("cache list --json", false).output);
  const json info = json::parse(cli("cache info --json " + built["key"].get<std::string>(), false).output);
  const json& entry = listed["entries"][0];
  EXPECT_EQ(entry["bytes"], entry["engine_bytes"].get<uint64_t>() + entry["manifest_bytes"].get<uint64_t>());
  EXPECT_EQ(info["bytes"], entry["bytes"]) << "list and info count the same bytes";
  EXPECT_EQ(listed["total_bytes"], entry["bytes"]);
}

TEST_F(UsageCli, InspectTextHasTheEnvironment) {
  json built = build_json(kTinynet);
  const CliRun text = cli("inspect " + built["engine_path"].get<std::string>());
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("\nenvironment:\n  backend      cpu\n  tensoracle   "), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("  gpu          none"), std::string::npos) << text.output;
}

TEST_F(UsageCli, BundleInspectSaysWhatAPathIs) {
  const std::string file = work_ / "notes.txt";
  std::filesystem::create_directories(work_ / "b");
  FILE* f = std::fopen(file.c_str(), "w");
  std::fclose(f);
  const CliRun regular = cli("bundle inspect " + file);
  EXPECT_EQ(regular.exit_code, 2);
  EXPECT_NE(regular.output.find("'" + file + "' is not a bundle directory: it is a regular file"), std::string::npos)
      << regular.output;
  const CliRun missing = cli("bundle inspect " + work_ / "absent");
  EXPECT_NE(missing.output.find("does not exist"), std::string::npos) << missing.output;
  const CliRun wheel = cli("bundle inspect-wheel " + work_ / "b");
  EXPECT_NE(wheel.output.find("is a directory, not a wheel or zip"), std::string::npos) << wheel.output;
}

}  // namespace
}  // namespace tensoracle
