// The engine fuzzer's seed corpus (tests/fuzz/corpus/engine) holds valid engines. This test checks
// they still load; with TENSORACLE_WRITE_FUZZ_SEEDS=1 it (re)generates them first, after a change
// of the format.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "host/engine/sample_engine.h"
#include "tensoracle/engine_file.h"

namespace tensoracle {
namespace {

const std::string kCorpus = std::string(TENSORACLE_SOURCE_DIR) + "/tests/fuzz/corpus/engine";

std::map<std::string, std::string> seeds() {
  std::map<std::string, std::string> out;
  out["sample.engine"] = testing::sample_engine_bytes();
  out["no-blobs.engine"] = [] {
    EngineWriter writer;
    writer.set_manifest_json(R"({"engine_name": "empty"})");
    writer.set_environment(testing::sample_environment());
    writer.set_io_table(IoTable{});
    writer.set_plan("");
    return writer.to_bytes().value();
  }();
  out["many-blobs.engine"] = [] {
    EngineWriter writer = testing::sample_engine_writer(R"({"engine_name": "many", "profiles": [{}]})", 40);
    for (int i = 0; i < 6; ++i) (void)writer.add_blob("layer" + std::to_string(i) + ".w", std::string(i * 3, 'w'));
    return writer.to_bytes().value();
  }();
  return out;
}

TEST(EngineFuzzSeeds, AreValidEngines) {
  if (std::getenv("TENSORACLE_WRITE_FUZZ_SEEDS") != nullptr) {
    std::filesystem::create_directories(kCorpus);
    for (const auto& [name, bytes] : seeds()) std::ofstream(kCorpus + "/" + name, std::ios::binary) << bytes;
  }
  for (const auto& [name, bytes] : seeds()) {
    std::ifstream in(kCorpus + "/" + name, std::ios::binary);
    ASSERT_TRUE(in.good()) << name << " is missing; run with TENSORACLE_WRITE_FUZZ_SEEDS=1";
    std::stringstream stored;
    stored << in.rdbuf();
    auto engine = EngineFile::open(kCorpus + "/" + name);
    EXPECT_TRUE(engine.is_ok()) << name << ": " << engine.status().to_string();
    EXPECT_EQ(stored.str(), bytes) << name << " is stale; run with TENSORACLE_WRITE_FUZZ_SEEDS=1";
  }
}

}  // namespace
}  // namespace tensoracle
