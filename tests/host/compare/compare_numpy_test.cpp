// compare_outputs against NumPy: tests/fixtures/compare holds arrays (random and adversarial:
// huge and tiny magnitudes, all-NaN, mixed inf, zero references, integers, bool, mixed and
// narrow dtypes) and NumPy's values of every metric, written by scripts/gen-compare-fixtures.py.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tensoracle/compare.h"
#include "tensoracle/npy.h"

namespace tensoracle {
namespace {

using nlohmann::json;

const std::string kDir = TENSORACLE_FIXTURES_DIR "/compare/";

json read_expected() {
  std::ifstream file(kDir + "expected.json");
  std::stringstream text;
  text << file.rdbuf();
  return json::parse(text.str());
}

// The fixtures write inf and NaN as strings, as the CLI does.
double as_double(const json& value) {
  if (value.is_string()) {
    const std::string s = value.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    return s == "inf" ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  }
  return value.get<double>();
}

// Exactly equal, or (for sums in another order) within a few ulps of NumPy's value.
void expect_value(const char* metric, double got, const json& want_json, bool exact) {
  const double want = as_double(want_json);
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << metric;
  } else if (exact || !std::isfinite(want)) {
    EXPECT_EQ(got, want) << metric;
  } else {
    EXPECT_NEAR(got, want, 1e-12 * std::max(std::fabs(want), 1e-300)) << metric;
  }
}

class NumpyFixtures : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(NumpyFixtures, EveryMetricMatchesNumpy) {
  const auto& [candidate_file, reference_file] = GetParam();
  const json expected = read_expected();
  auto candidate = read_named_arrays(kDir + candidate_file);
  auto reference = read_named_arrays(kDir + reference_file);
  ASSERT_TRUE(candidate.is_ok()) << candidate.status().to_string();
  ASSERT_TRUE(reference.is_ok()) << reference.status().to_string();

  CompareOptions options;
  options.tolerance = Tolerance{expected["atol"].get<double>(), expected["rtol"].get<double>()};
  options.metrics = {"psnr", "snr", "mse"};
  auto report = compare_outputs(views_of(*candidate), views_of(*reference), options);
  ASSERT_TRUE(report.is_ok()) << report.status().to_string();
  ASSERT_FALSE(report->outputs.empty());
  EXPECT_TRUE(report->missing_outputs.empty());
  EXPECT_TRUE(report->extra_outputs.empty());

  for (const auto& [name, got] : report->outputs) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(expected["cases"].contains(name));
    const json& want = expected["cases"][name];
    EXPECT_EQ(got.shape.values(), want["shape"].get<std::vector<int64_t>>());
    EXPECT_EQ(got.element_count, want["element_count"].get<int64_t>());
    EXPECT_EQ(got.candidate_non_finite.nan, want["candidate_nan"].get<int64_t>());
    EXPECT_EQ(got.candidate_non_finite.posinf, want["candidate_posinf"].get<int64_t>());
    EXPECT_EQ(got.candidate_non_finite.neginf, want["candidate_neginf"].get<int64_t>());
    EXPECT_EQ(got.reference_non_finite.nan, want["reference_nan"].get<int64_t>());
    EXPECT_EQ(got.reference_non_finite.posinf, want["reference_posinf"].get<int64_t>());
    EXPECT_EQ(got.reference_non_finite.neginf, want["reference_neginf"].get<int64_t>());
    EXPECT_EQ(got.finite_pair_count, want["finite_pair_count"].get<int64_t>());
    expect_value("max_abs_error", got.max_abs_error, want["max_abs_error"], true);
    expect_value("rel_l2_error", got.rel_l2_error, want["rel_l2_error"], false);
    expect_value("cosine_similarity", got.cosine_similarity, want["cosine_similarity"], false);
    expect_value("psnr", got.metrics.at("psnr"), want["psnr"], false);
    expect_value("snr", got.metrics.at("snr"), want["snr"], false);
    expect_value("mse", got.metrics.at("mse"), want["mse"], false);

    ASSERT_TRUE(got.tolerance_check);
    EXPECT_EQ(got.tolerance_check->outside_count, want["outside_tolerance_count"].get<int64_t>());
    expect_value("outside_tolerance_fraction", got.tolerance_check->outside_fraction,
                 want["outside_tolerance_fraction"], true);
    ASSERT_EQ(got.tolerance_check->worst.has_value(), !want["worst_index"].is_null());
    if (got.tolerance_check->worst) {
      const auto& worst = *got.tolerance_check->worst;
      EXPECT_EQ(worst.index, want["worst_index"].get<std::vector<int64_t>>());
      expect_value("worst_candidate", worst.candidate, want["worst_candidate"], true);
      expect_value("worst_reference", worst.reference, want["worst_reference"], true);
      expect_value("worst_excess", worst.excess, want["worst_excess"], true);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, NumpyFixtures,
                         ::testing::Values(std::make_pair("candidate.npz", "reference.npz"),
                                           std::make_pair("narrow.candidate.safetensors",
                                                          "narrow.reference.safetensors")),
                         [](const auto& param_info) { return param_info.index == 0 ? "npz" : "safetensors_narrow"; });

}  // namespace
}  // namespace tensoracle
