// Limits (the JSON format) and evaluate_gate: every violated limit is listed with its value and
// threshold; structural problems fail the gate; bad limits files give errors naming the key.
#include <gtest/gtest.h>

#include <limits>

#include "host/compare/compare_test_util.h"
#include "tensoracle/compare.h"

namespace tensoracle {
namespace {

using testing::make_array;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Limits parse_ok(const std::string& text) {
  auto limits = parse_limits(text, "limits.json");
  EXPECT_TRUE(limits.is_ok()) << limits.status().to_string();
  return limits.is_ok() ? *limits : Limits{};
}

std::string parse_error(const std::string& text) {
  auto limits = parse_limits(text, "limits.json");
  EXPECT_FALSE(limits.is_ok()) << text;
  return limits.is_ok() ? "" : limits.status().message();
}

TEST(Limits, DefaultsAreAllcloseAndAllFinite) {
  const Limits limits;
  EXPECT_FALSE(limits.defaults.allow_non_finite);
  EXPECT_EQ(limits.defaults.max_outside_tolerance_count, 0);
  EXPECT_FALSE(limits.defaults.max_abs_error);
  EXPECT_FALSE(limits.defaults.tolerance);
  EXPECT_FALSE(limits.allow_missing_outputs);
  EXPECT_FALSE(limits.allow_extra_outputs);
}

TEST(Limits, OutputBlocksStartFromTheDefaultBlock) {
  const Limits limits = parse_ok(R"({
    "default": {"atol": 1e-5, "rtol": 1e-3, "max_abs_error": 0.01, "min_cosine_similarity": 0.999,
                "metrics": {"psnr": {"min": 40}}},
    "outputs": {"logits": {"max_abs_error": 0.1, "rtol": 0.01, "max_outside_tolerance_count": null,
                           "max_outside_tolerance_fraction": 0.001, "metrics": {"snr": {"min": 30}}},
                "mask": {"allow_non_finite": true, "metrics": {"psnr": null}}},
    "allow_extra_outputs": true})");
  EXPECT_EQ(limits.defaults.max_abs_error, 0.01);
  const OutputLimits& logits = limits.for_output("logits");
  EXPECT_EQ(logits.max_abs_error, 0.1);
  EXPECT_EQ(logits.min_cosine_similarity, 0.999);
  ASSERT_TRUE(logits.tolerance);
  EXPECT_EQ(logits.tolerance->atol, 1e-5);
  EXPECT_EQ(logits.tolerance->rtol, 0.01);
  EXPECT_FALSE(logits.max_outside_tolerance_count);
  EXPECT_EQ(logits.max_outside_tolerance_fraction, 0.001);
  EXPECT_EQ(logits.metrics.size(), 2u);
  EXPECT_TRUE(limits.for_output("mask").allow_non_finite);
  EXPECT_EQ(limits.for_output("mask").metrics.count("psnr"), 0u);
  EXPECT_EQ(&limits.for_output("other"), &limits.defaults);
  EXPECT_TRUE(limits.allow_extra_outputs);

  const CompareOptions options = compare_options_for(limits);
  EXPECT_EQ(options.tolerance->rtol, 1e-3);
  EXPECT_EQ(options.output_tolerance.at("logits").rtol, 0.01);
  EXPECT_EQ(options.metrics, (std::vector<std::string>{"psnr", "snr"}));
}

TEST(Limits, ErrorsNameTheSourceAndTheKey) {
  EXPECT_NE(parse_error("{\"default\": {\"max_abs_eror\": 1}}").find("limits.json: /default: unknown key 'max_abs_eror'"),
            std::string::npos);
  EXPECT_NE(parse_error("{\"defaults\": {}}").find("unknown key 'defaults'"), std::string::npos);
  EXPECT_NE(parse_error("{\"outputs\": {\"y\": {\"max_abs_error\": -1}}}").find("limits.json: /outputs/y/max_abs_error: expected null or a number in [0, inf], got -1"),
            std::string::npos);
  EXPECT_NE(parse_error("{\"default\": {\"max_abs_error\": \"1e-3\"}}").find("/default/max_abs_error"),
            std::string::npos);
  EXPECT_NE(parse_error("{\"default\": {\"min_cosine_similarity\": 2}}").find("min_cosine_similarity"),
            std::string::npos);
  EXPECT_NE(parse_error("{\"default\": {\"max_outside_tolerance_count\": 1.5}}").find("max_outside_tolerance_count"),
            std::string::npos);
  EXPECT_NE(parse_error("{\"default\": {\"allow_non_finite\": 1}}").find("allow_non_finite"), std::string::npos);
  EXPECT_NE(parse_error("{\"default\": {\"atol\": 1e-3}}").find("'atol' needs 'rtol'"), std::string::npos);
  EXPECT_NE(parse_error("{\"default\": {\"metrics\": {\"psnr\": {\"minimum\": 1}}}}").find("/default/metrics/psnr: unknown key 'minimum'"),
            std::string::npos);
  EXPECT_NE(parse_error("{\"default\": {\"metrics\": {\"psnr\": {\"min\": 2, \"max\": 1}}}}").find("above max"),
            std::string::npos);
  EXPECT_NE(parse_error("[1, 2]").find("limits.json"), std::string::npos);
  EXPECT_NE(parse_error("{\"default\": ").find("limits.json: /default: invalid JSON: parse error at line 1, column 13"), std::string::npos);
}

TEST(Limits, MissingFileIsNotFound) {
  auto limits = read_limits_file(TENSORACLE_FIXTURES_DIR "/compare/no-such-limits.json");
  ASSERT_FALSE(limits.is_ok());
  EXPECT_EQ(limits.status().code(), StatusCode::kNotFound);
  EXPECT_NE(limits.status().message().find("no-such-limits.json"), std::string::npos);
}

// A report of one output "y" compared with `tolerance` and the extra metrics.
ComparisonReport report_of(const std::vector<double>& c, const std::vector<double>& r,
                           std::optional<Tolerance> tolerance, std::vector<std::string> metrics = {}) {
  const HostArray ca = make_array(DataType::kFloat32, c), ra = make_array(DataType::kFloat32, r);
  CompareOptions options;
  options.tolerance = tolerance;
  options.metrics = std::move(metrics);
  auto report = compare_outputs({{"y", ca.view()}}, {{"y", ra.view()}}, options);
  EXPECT_TRUE(report.is_ok()) << report.status().to_string();
  return report.is_ok() ? *report : ComparisonReport{};
}

GateResult gate_ok(const ComparisonReport& report, const Limits& limits) {
  auto gate = evaluate_gate(report, limits);
  EXPECT_TRUE(gate.is_ok()) << gate.status().to_string();
  return gate.is_ok() ? *gate : GateResult{};
}

std::vector<std::string> violated(const GateResult& gate) {
  std::vector<std::string> limits;
  for (const Violation& v : gate.violations) limits.push_back(v.limit);
  return limits;
}

TEST(Gate, PassesWithinEveryLimit) {
  const ComparisonReport report = report_of({1, 2, 3}, {1, 2, 3}, Tolerance{0, 0}, {"psnr"});
  Limits limits;
  limits.defaults.max_abs_error = 0;
  limits.defaults.max_rel_l2_error = 0;
  limits.defaults.min_cosine_similarity = 1;
  limits.defaults.metrics["psnr"].min = 100;
  const GateResult gate = gate_ok(report, limits);
  EXPECT_TRUE(gate.passed);
  EXPECT_TRUE(gate.violations.empty());
}

TEST(Gate, ListsEveryViolatedLimitWithValueAndThreshold) {
  const ComparisonReport report = report_of({1, 2, 4}, {1, 2, 3}, Tolerance{0, 0}, {"psnr", "snr"});
  const OutputComparison& y = report.outputs.at("y");
  Limits limits;
  limits.defaults.max_abs_error = 0.5;
  limits.defaults.max_rel_l2_error = 0.01;
  limits.defaults.min_cosine_similarity = 0.9999;
  limits.defaults.max_outside_tolerance_fraction = 0.1;
  limits.defaults.metrics["psnr"].min = 60;
  limits.defaults.metrics["snr"].max = 1;
  const GateResult gate = gate_ok(report, limits);
  EXPECT_FALSE(gate.passed);
  EXPECT_EQ(violated(gate),
            (std::vector<std::string>{"max_abs_error", "max_rel_l2_error", "min_cosine_similarity",
                                      "max_outside_tolerance_count", "max_outside_tolerance_fraction",
                                      "metrics.psnr.min", "metrics.snr.max"}));
  const Violation& abs = gate.violations[0];
  EXPECT_EQ(abs.output, "y");
  EXPECT_EQ(abs.value, y.max_abs_error);
  EXPECT_EQ(abs.threshold, 0.5);
  EXPECT_NE(abs.message.find("'y'"), std::string::npos);
  EXPECT_EQ(gate.violations[3].value, 1.0);
  EXPECT_EQ(gate.violations[3].threshold, 0.0);
}

TEST(Gate, NonFiniteValuesFailUnlessAllowed) {
  const ComparisonReport report = report_of({1, kNaN}, {1, kNaN}, std::nullopt);
  const GateResult strict = gate_ok(report, Limits{});
  EXPECT_EQ(violated(strict), (std::vector<std::string>{"allow_non_finite", "allow_non_finite"}));
  EXPECT_EQ(strict.violations[0].value, 1.0);
  EXPECT_NE(strict.violations[0].message.find("candidate"), std::string::npos);
  EXPECT_NE(strict.violations[1].message.find("reference"), std::string::npos);

  Limits lenient;
  lenient.defaults.allow_non_finite = true;
  EXPECT_TRUE(gate_ok(report, lenient).passed);
}

TEST(Gate, NanMetricValuesNeverPass) {
  MetricRegistry registry;
  ASSERT_TRUE(registry.add({"undefined", "", [](const MetricInput&) -> Result<double> { return kNaN; }}).is_ok());
  const HostArray a = make_array(DataType::kFloat32, {1, 2});
  CompareOptions options;
  options.registry = &registry;
  options.metrics = {"undefined"};
  auto report = compare_outputs({{"y", a.view()}}, {{"y", a.view()}}, options);
  ASSERT_TRUE(report.is_ok());
  Limits limits;
  limits.defaults.metrics["undefined"].min = 0;
  EXPECT_EQ(violated(gate_ok(*report, limits)), std::vector<std::string>{"metrics.undefined.min"});
}

TEST(Gate, StructuralProblemsFail) {
  const HostArray a = make_array(DataType::kFloat32, {1, 2});
  const HostArray b = make_array(DataType::kFloat32, {1, 2, 3});
  auto report = compare_outputs({{"y", a.view()}, {"extra", a.view()}}, {{"y", b.view()}, {"missing", a.view()}});
  ASSERT_TRUE(report.is_ok());
  const GateResult gate = gate_ok(*report, Limits{});
  EXPECT_EQ(violated(gate), (std::vector<std::string>{"allow_missing_outputs", "allow_extra_outputs", "shape"}));
  EXPECT_FALSE(gate.violations[2].value);
  EXPECT_NE(gate.violations[2].message.find("[2]"), std::string::npos);
  EXPECT_NE(gate.violations[2].message.find("[3]"), std::string::npos);

  Limits lenient;
  lenient.allow_missing_outputs = lenient.allow_extra_outputs = true;
  EXPECT_EQ(violated(gate_ok(*report, lenient)), std::vector<std::string>{"shape"});
}

TEST(Gate, LimitsNamingAnUnknownOutputAreAnError) {
  const ComparisonReport report = report_of({1}, {1}, std::nullopt);
  Limits limits;
  limits.outputs["logitz"] = limits.defaults;
  auto gate = evaluate_gate(report, limits);
  ASSERT_FALSE(gate.is_ok());
  EXPECT_NE(gate.status().message().find("'logitz'"), std::string::npos);
}

TEST(Gate, ToleranceLimitsWithoutATolerancesAreAnError) {
  const ComparisonReport report = report_of({1}, {1}, std::nullopt);
  EXPECT_TRUE(gate_ok(report, Limits{}).passed);  // the default count limit waits for a tolerance
  Limits limits;
  limits.defaults.max_outside_tolerance_fraction = 0.01;
  EXPECT_FALSE(evaluate_gate(report, limits).is_ok());
}

TEST(Gate, BoundsOnUncomputedMetricsAreAnError) {
  const ComparisonReport report = report_of({1}, {1}, std::nullopt);
  Limits limits;
  limits.defaults.metrics["psnr"].min = 30;
  auto gate = evaluate_gate(report, limits);
  ASSERT_FALSE(gate.is_ok());
  EXPECT_NE(gate.status().message().find("'psnr'"), std::string::npos);
}

}  // namespace
}  // namespace tensoracle
