// `tensoracle cache ...` against a cache filled through the store.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <set>
#include <nlohmann/json.hpp>

#include "host/cache/cache_testing.h"
#include "host/engine/engine_surgery.h"
#include "host/cli_run.h"
#include "tensoracle/npy.h"
#include "tensoracle/cache.h"

namespace tensoracle {
namespace {

using testing::counting_builder;
using testing::sample_manifest;
using testing::TempDir;

using testing::CliRun;
CliRun cli(const std::string& arguments) { return testing::run_cli(arguments); }

class CacheCli : public ::testing::Test {
 protected:
  void SetUp() override {
    CacheOptions options;
    options.directory = dir_.path();
    options.max_size_bytes = 0;
    const CacheStore store(options);
    int builds = 0;
    for (const char* name : {"tinynet", "resnet"}) {
      auto built = store.open_or_build(sample_manifest(name), CachePolicy::kReuse, counting_builder(&builds));
      ASSERT_TRUE(built.is_ok());
      keys_.push_back(built->key);
    }
  }
  std::string dir_flag() const { return " --dir " + dir_.path(); }

  TempDir dir_;
  std::vector<std::string> keys_;
};

TEST_F(CacheCli, ListShowsEveryEntry) {
  const CliRun text = cli("cache list" + dir_flag());
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("2 engines"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("tinynet"), std::string::npos) << text.output;
  const CliRun json = cli("cache list --json" + dir_flag());
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const auto parsed = nlohmann::json::parse(json.output);
  ASSERT_EQ(parsed["entries"].size(), 2u);
  std::set<std::string> keys;
  for (const auto& entry : parsed["entries"]) keys.insert(entry["key"].get<std::string>());
  EXPECT_EQ(keys, std::set<std::string>(keys_.begin(), keys_.end()));
}

TEST_F(CacheCli, InfoByPrefixShowsTheManifest) {
  const CliRun json = cli("cache info " + keys_[0].substr(0, 10) + " --json" + dir_flag());
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const auto parsed = nlohmann::json::parse(json.output);
  EXPECT_EQ(parsed["key"], keys_[0]);
  EXPECT_EQ(parsed["manifest"]["engine_name"], "tinynet");
  EXPECT_EQ(cli("cache info 0000000000" + dir_flag()).exit_code, 2);
}

TEST_F(CacheCli, VerifyReportsCorruptEntriesWithExitStatus1) {
  EXPECT_EQ(cli("cache verify" + dir_flag()).exit_code, 0);
  const std::string engine = dir_ / (keys_[1] + ".engine");
  FILE* file = std::fopen(engine.c_str(), "r+b");
  std::fseek(file, 700, SEEK_SET);
  std::fputc('X', file);
  std::fclose(file);
  const CliRun json = cli("cache verify --json" + dir_flag());
  EXPECT_EQ(json.exit_code, 1) << json.output;
  const auto parsed = nlohmann::json::parse(json.output);
  EXPECT_EQ(parsed["checked"], 2);
  ASSERT_EQ(parsed["problems"].size(), 1u);
  EXPECT_EQ(parsed["problems"][0]["key"], keys_[1]);
  EXPECT_NE(parsed["problems"][0]["reason"].get<std::string>().find("checksum"), std::string::npos);
}

// An engine whose checksum is valid but whose I/O table contradicts its plan: verify says so
// (it once said "all good"), and so does a run of it.
TEST_F(CacheCli, VerifyAndRunRefuseAResealedEngineWhoseSectionsDisagree) {
  const std::string engine = dir_ / (keys_[0] + ".engine");
  std::ifstream in(engine, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string hostile = testing::edit_section_json(bytes, engine_layout::SectionKind::kIoTable,
                                                         [](nlohmann::json& io) { io["tensors"][1]["dtype"] = "int8"; });
  std::ofstream(engine, std::ios::binary | std::ios::trunc) << hostile;
  const CliRun verify = cli("cache verify" + dir_flag());
  EXPECT_EQ(verify.exit_code, 1) << verify.output;
  EXPECT_NE(verify.output.find("BAD " + keys_[0].substr(0, 16) + ": engine '" + engine +
                               "': output 'y' is int8 in the I/O table, fp32 in the plan's network"),
            std::string::npos)
      << verify.output;
  EXPECT_NE(verify.output.find(": 1 problem\n"), std::string::npos) << verify.output;

  const std::string inputs = dir_ / "x.npy";
  const HostArray x = HostArray::zeros(DataType::kFloat32, {2, 8}).value();  // small_cpu_engine_writer's input
  ASSERT_TRUE(write_npy(inputs, x.view()).is_ok());
  const CliRun run = cli("run --engine " + engine + " --inputs " + inputs + " --outputs " + (dir_ / "out.npz"));
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("output 'y' is int8 in the I/O table, fp32 in the plan's network"), std::string::npos)
      << run.output;
}

TEST_F(CacheCli, PruneAndClear) {
  const CliRun kept = cli("cache prune --max-size 1G --json" + dir_flag());
  ASSERT_EQ(kept.exit_code, 0) << kept.output;
  EXPECT_TRUE(nlohmann::json::parse(kept.output)["removed"].empty());
  const CliRun pruned = cli("cache prune --max-size 1 --json" + dir_flag());
  ASSERT_EQ(pruned.exit_code, 0) << pruned.output;
  EXPECT_EQ(nlohmann::json::parse(pruned.output)["removed"].size(), 2u);
  EXPECT_EQ(cli("cache prune --max-size lots" + dir_flag()).exit_code, 2);
  const CliRun cleared = cli("cache clear" + dir_flag());
  EXPECT_EQ(cleared.exit_code, 0) << cleared.output;
  EXPECT_NE(cli("cache list" + dir_flag()).output.find("0 engines"), std::string::npos);
}

}  // namespace
}  // namespace tensoracle
