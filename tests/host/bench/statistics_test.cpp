// The timing statistics against NumPy (tests/fixtures/bench/statistics.json, written by
// scripts/gen-bench-fixtures.py): min, median, mean, p90, p99, max, sample stddev, cv.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "tensoracle/bench.h"

namespace tensoracle {
namespace {

using nlohmann::json;

json fixture() {
  std::ifstream in(std::string(TENSORACLE_FIXTURES_DIR) + "/bench/statistics.json");
  return json::parse(in);
}

void expect_close(double ours, double numpy, const std::string& what) {
  EXPECT_NEAR(ours, numpy, 1e-12 * std::max(1.0, std::fabs(numpy))) << what;
}

TEST(TimingStatistics, MatchNumpyOnEverySampleSet) {
  const json sets = fixture();
  ASSERT_GE(sets.size(), 5u);
  for (const auto& [name, set] : sets.items()) {
    const std::vector<double> samples = set["samples"].get<std::vector<double>>();
    auto stats = summarize_samples(samples);
    ASSERT_TRUE(stats.is_ok()) << name << ": " << stats.status().to_string();
    const json& np = set["numpy"];
    EXPECT_EQ(stats->count, static_cast<int64_t>(samples.size())) << name;
    expect_close(stats->min_ms, np["min"], name + " min");
    expect_close(stats->median_ms, np["median"], name + " median");
    expect_close(stats->mean_ms, np["mean"], name + " mean");
    expect_close(stats->p90_ms, np["p90"], name + " p90");
    expect_close(stats->p99_ms, np["p99"], name + " p99");
    expect_close(stats->max_ms, np["max"], name + " max");
    expect_close(stats->stddev_ms, np["stddev"], name + " stddev");
    expect_close(stats->cv, np["cv"], name + " cv");
  }
}

TEST(TimingStatistics, OrderOfTheSamplesDoesNotMatter) {
  const std::vector<double> samples = fixture()["lognormal_101"]["samples"].get<std::vector<double>>();
  std::vector<double> reversed(samples.rbegin(), samples.rend());
  auto a = summarize_samples(samples), b = summarize_samples(reversed);
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  EXPECT_EQ(a->median_ms, b->median_ms);
  EXPECT_EQ(a->p99_ms, b->p99_ms);
}

TEST(TimingStatistics, RefusesEmptyNegativeAndNonFiniteSamples) {
  EXPECT_FALSE(summarize_samples({}).is_ok());
  auto negative = summarize_samples({1.0, -0.5});
  ASSERT_FALSE(negative.is_ok());
  EXPECT_NE(negative.status().message().find("sample 1"), std::string::npos) << negative.status().message();
  EXPECT_FALSE(summarize_samples({1.0, std::nan("")}).is_ok());
  EXPECT_FALSE(summarize_samples({INFINITY}).is_ok());
}

}  // namespace
}  // namespace tensoracle
