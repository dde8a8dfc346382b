// The confidence interval of a ratio of medians (bench.h): a percentile bootstrap over paired
// rounds. Resampling whole rounds keeps what a round's two samples share (the machine's state
// at that moment), so slow drift shows up in both medians alike instead of widening the interval;
// resampling placements first (two stages) makes what differs between placements widen it.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>

#include "core/errors.h"
#include "tensoracle/bench.h"

namespace tensoracle {

namespace {

// numpy.median: the middle value, or the mean of the two middle values. Reorders `v`.
double median_in_place(std::vector<double>& v) {
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double upper = v[mid];
  if (v.size() % 2) return upper;
  return (*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid)) + upper) / 2;
}

// Uniform in [0, n) without modulo bias, from the generator's exactly specified 64-bit output
// (std::uniform_int_distribution differs between standard libraries; this does not).
uint64_t uniform_below(std::mt19937_64& rng, uint64_t n) {
  const uint64_t limit = std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % n;
  uint64_t x;
  do {
    x = rng();
  } while (x >= limit);
  return x % n;
}

}  // namespace

Result<RatioInterval> bootstrap_median_ratio(const std::vector<double>& candidate, const std::vector<double>& baseline,
                                             const BootstrapSettings& settings, const std::vector<int>& clusters) {
  if (candidate.size() != baseline.size())
    return invalid_argument("paired bootstrap: {} candidate samples but {} baseline samples", candidate.size(),
                            baseline.size());
  if (candidate.size() < 2) return invalid_argument("paired bootstrap: {} rounds (at least 2 needed)", candidate.size());
  if (settings.resamples < 100)
    return invalid_argument("bootstrap resamples {} (at least 100 needed)", settings.resamples);
  if (!(settings.confidence > 0 && settings.confidence < 1))
    return invalid_argument("bootstrap confidence {} (must lie strictly between 0 and 1)", settings.confidence);
  if (!clusters.empty() && clusters.size() != candidate.size())
    return invalid_argument("paired bootstrap: {} cluster ids for {} rounds", clusters.size(), candidate.size());
  // The rounds of each cluster (one cluster of every round when none are given).
  std::map<int, std::vector<size_t>> by_cluster;
  for (size_t i = 0; i < candidate.size(); ++i) by_cluster[clusters.empty() ? 0 : clusters[i]].push_back(i);
  std::vector<std::vector<size_t>> groups;
  for (auto& [id, rounds] : by_cluster) groups.push_back(std::move(rounds));

  std::vector<double> c = candidate, b = baseline;
  const double baseline_median = median_in_place(b);
  if (!(baseline_median > 0)) return invalid_argument("paired bootstrap: the baseline median is {}", baseline_median);
  RatioInterval out;
  out.estimate = median_in_place(c) / baseline_median;
  out.confidence = settings.confidence;
  out.resamples = settings.resamples;
  out.seed = settings.seed;
  const std::string what =
      groups.size() == 1
          ? fmt::format("{} resamples of the rounds with replacement", settings.resamples)
          : fmt::format("{} two-stage resamples: the {} placements with replacement, then each drawn placement's "
                        "rounds with replacement",
                        settings.resamples, groups.size());
  out.method = fmt::format(
      "percentile bootstrap over {} paired rounds: {} (std::mt19937_64, seed {}), the ratio of medians of each, interval "
      "at the {:g} and {:g} quantiles",
      candidate.size(), what, settings.seed, (1 - settings.confidence) / 2, (1 + settings.confidence) / 2);

  std::mt19937_64 rng(settings.seed);
  std::vector<double> ratios(static_cast<size_t>(settings.resamples));
  for (double& ratio : ratios) {
    c.clear();
    b.clear();
    for (size_t g = 0; g < groups.size(); ++g) {
      const std::vector<size_t>& group =
          groups.size() == 1 ? groups[0] : groups[static_cast<size_t>(uniform_below(rng, groups.size()))];
      for (size_t i = 0; i < group.size(); ++i) {
        const size_t round = group[static_cast<size_t>(uniform_below(rng, group.size()))];
        c.push_back(candidate[round]);
        b.push_back(baseline[round]);
      }
    }
    const double bm = median_in_place(b);
    // A resample whose baseline median is 0 (possible only with zero samples) has no ratio.
    ratio = bm > 0 ? median_in_place(c) / bm : std::numeric_limits<double>::infinity();
  }
  std::sort(ratios.begin(), ratios.end());
  out.low = percentile_of_sorted(ratios, 50 * (1 - settings.confidence));
  out.high = percentile_of_sorted(ratios, 50 * (1 + settings.confidence));
  return out;
}

}  // namespace tensoracle
