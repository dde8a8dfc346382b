// The paired bootstrap of a ratio of medians: its interval covers the true ratio about as often
// as its confidence says, contains 1 for two samples of one distribution, and is reproducible.
#include <gtest/gtest.h>

#include <random>

#include "tensoracle/bench.h"

namespace tensoracle {
namespace {

struct Rounds {
  std::vector<double> candidate, baseline;
};

// n rounds of log-normal latencies; the candidate's are `ratio` times as long. With `drift`, each
// round's two samples share a multiplicative factor (the machine's state at that moment).
Rounds synthetic(std::mt19937_64& rng, int n, double ratio, double drift) {
  std::lognormal_distribution<double> noise(0.0, 0.2), shared(0.0, drift);
  Rounds r;
  for (int i = 0; i < n; ++i) {
    const double common = drift > 0 ? shared(rng) : 1.0;
    r.baseline.push_back(common * noise(rng));
    r.candidate.push_back(common * ratio * noise(rng));
  }
  return r;
}

// The fraction of `trials` intervals that contain `truth`.
double coverage(double truth, double drift, int trials, int n) {
  std::mt19937_64 rng(12345);
  BootstrapSettings settings;
  settings.resamples = 1000;
  int covered = 0;
  for (int t = 0; t < trials; ++t) {
    const Rounds r = synthetic(rng, n, truth, drift);
    settings.seed = static_cast<uint64_t>(t);
    auto ci = bootstrap_median_ratio(r.candidate, r.baseline, settings);
    EXPECT_TRUE(ci.is_ok()) << ci.status().to_string();
    if (ci.is_ok() && ci->low <= truth && truth <= ci->high) ++covered;
  }
  return static_cast<double>(covered) / trials;
}

// Placements: each of k placements per side moves that side's times by a fixed factor (where its
// memory landed), and round i ran on placement i % k. `true_ratio` is the ratio of the engines
// without placement. Returns the fraction of intervals containing it, with and without the
// placements given as clusters.
std::pair<double, double> placement_coverage(int k, double placement_sigma, double noise_sigma, int trials) {
  std::mt19937_64 rng(777);
  std::lognormal_distribution<double> noise(0.0, noise_sigma), placement(0.0, placement_sigma);
  BootstrapSettings settings;
  settings.resamples = 1000;
  int with = 0, without = 0;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> candidate_factor(k), baseline_factor(k);
    for (int p = 0; p < k; ++p) candidate_factor[p] = placement(rng), baseline_factor[p] = placement(rng);
    std::vector<double> candidate, baseline;
    std::vector<int> clusters;
    for (int i = 0; i < 100; ++i) {
      clusters.push_back(i % k);
      candidate.push_back(candidate_factor[i % k] * noise(rng));
      baseline.push_back(baseline_factor[i % k] * noise(rng));
    }
    settings.seed = static_cast<uint64_t>(t);
    auto clustered = bootstrap_median_ratio(candidate, baseline, settings, clusters);
    auto plain = bootstrap_median_ratio(candidate, baseline, settings);
    EXPECT_TRUE(clustered.is_ok() && plain.is_ok());
    if (clustered.is_ok() && clustered->low <= 1.0 && 1.0 <= clustered->high) ++with;
    if (plain.is_ok() && plain->low <= 1.0 && 1.0 <= plain->high) ++without;
  }
  return {static_cast<double>(with) / trials, static_cast<double>(without) / trials};
}

// Two copies of one engine differ by their placement in memory (on the H200 about 0.35% at
// batch 32) by more than their sampling noise (a CV of a few tenths of a percent, so a median's
// error far smaller): with one placement per side the interval excludes 1.0 most of the time
// whatever the resampling; with several placements resampled first it covers 1.0 at close to its
// confidence (a percentile bootstrap of few clusters stays a little narrow, which the bounds
// allow for), and far more often than resampling the rounds alone.
TEST(Bootstrap, ResamplingPlacementsCoversAnEngineAgainstItself) {
  const double placement = 0.004, noise = 0.002;
  EXPECT_LE(placement_coverage(1, placement, noise, 200).first, 0.3) << "one placement per side";
  const auto [with4, without4] = placement_coverage(4, placement, noise, 200);
  EXPECT_GE(with4, 0.75) << "4 placements, resampled";
  EXPECT_GT(with4, without4 + 0.3) << "4 placements: resampled vs rounds only";
  EXPECT_GE(placement_coverage(8, placement, noise, 200).first, 0.85) << "8 placements, resampled";
}

TEST(Bootstrap, ClusterIdsMustCoverEveryRound) {
  auto ci = bootstrap_median_ratio({1, 2, 3}, {1, 2, 3}, {}, {0, 1});
  ASSERT_FALSE(ci.is_ok());
  EXPECT_NE(ci.status().message().find("2 cluster ids for 3 rounds"), std::string::npos) << ci.status().message();
  auto two_stage = bootstrap_median_ratio({1, 2, 3, 4}, {1, 2, 3, 4}, {}, {0, 1, 0, 1});
  ASSERT_TRUE(two_stage.is_ok());
  EXPECT_NE(two_stage->method.find("the 2 placements with replacement"), std::string::npos) << two_stage->method;
}

TEST(Bootstrap, CoversTheTrueRatioAtAboutItsConfidence) {
  // 95% nominal; 300 trials give a standard error of about 1.3%.
  const double c = coverage(0.8, 0.0, 300, 100);
  EXPECT_GE(c, 0.90) << "coverage " << c;
  EXPECT_LE(c, 0.99) << "coverage " << c;
}

TEST(Bootstrap, CoversTheTrueRatioUnderDriftSharedByARound) {
  const double c = coverage(1.25, 0.3, 300, 100);
  EXPECT_GE(c, 0.90) << "coverage " << c;
  EXPECT_LE(c, 0.995) << "coverage " << c;
}

TEST(Bootstrap, IdenticalDistributionsGiveIntervalsAroundOne) {
  const double c = coverage(1.0, 0.1, 300, 100);
  EXPECT_GE(c, 0.90) << "fraction of intervals containing 1.0: " << c;
}

TEST(Bootstrap, IdenticalSamplesGiveExactlyOne) {
  const std::vector<double> same = {1.0, 1.5, 0.9, 1.2, 1.1, 1.3};
  auto ci = bootstrap_median_ratio(same, same, {});
  ASSERT_TRUE(ci.is_ok());
  EXPECT_EQ(ci->estimate, 1.0);
  EXPECT_EQ(ci->low, 1.0);
  EXPECT_EQ(ci->high, 1.0);
}

TEST(Bootstrap, TheIntervalHoldsTheEstimateAndNarrowsWithMoreRounds) {
  std::mt19937_64 rng(7);
  const Rounds small = synthetic(rng, 30, 0.5, 0.0), large = synthetic(rng, 1000, 0.5, 0.0);
  auto a = bootstrap_median_ratio(small.candidate, small.baseline, {});
  auto b = bootstrap_median_ratio(large.candidate, large.baseline, {});
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  EXPECT_LE(a->low, a->estimate);
  EXPECT_GE(a->high, a->estimate);
  EXPECT_LT(b->high - b->low, a->high - a->low);
  EXPECT_NEAR(b->estimate, 0.5, 0.05);
}

TEST(Bootstrap, IsReproducibleForASeedAndSaysHowItWasMade) {
  std::mt19937_64 rng(9);
  const Rounds r = synthetic(rng, 50, 1.1, 0.0);
  BootstrapSettings s;
  s.seed = 42;
  auto a = bootstrap_median_ratio(r.candidate, r.baseline, s), b = bootstrap_median_ratio(r.candidate, r.baseline, s);
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  EXPECT_EQ(a->low, b->low);
  EXPECT_EQ(a->high, b->high);
  EXPECT_EQ(a->resamples, 2000);
  EXPECT_EQ(a->seed, 42u);
  EXPECT_NE(a->method.find("50 paired rounds"), std::string::npos) << a->method;
  s.seed = 43;
  auto c = bootstrap_median_ratio(r.candidate, r.baseline, s);
  ASSERT_TRUE(c.is_ok());
  EXPECT_NE(a->low, c->low);
}

TEST(Bootstrap, RefusesWhatItCannotResample) {
  EXPECT_FALSE(bootstrap_median_ratio({1, 2}, {1, 2, 3}, {}).is_ok());
  EXPECT_FALSE(bootstrap_median_ratio({1}, {1}, {}).is_ok());
  EXPECT_FALSE(bootstrap_median_ratio({1, 2}, {0, 0}, {}).is_ok());
  BootstrapSettings s;
  s.confidence = 1.0;
  EXPECT_FALSE(bootstrap_median_ratio({1, 2}, {1, 2}, s).is_ok());
  s = {};
  s.resamples = 10;
  EXPECT_FALSE(bootstrap_median_ratio({1, 2}, {1, 2}, s).is_ok());
}

}  // namespace
}  // namespace tensoracle
