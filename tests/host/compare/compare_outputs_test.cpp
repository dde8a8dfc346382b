// compare_outputs on in-memory arrays: the corner cases docs/compare.md defines, agreement with
// a plain scalar implementation of the definitions, and independence from the thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "host/compare/compare_test_util.h"
#include "tensoracle/compare.h"

namespace tensoracle {
namespace {

using testing::make_array;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

OutputComparison compare_ok(const HostArray& c, const HostArray& r, std::optional<Tolerance> tolerance = std::nullopt,
                            unsigned threads = 0) {
  CompareOptions options;
  options.tolerance = tolerance;
  options.threads = threads;
  auto result = compare_outputs(c.view(), r.view(), options);
  EXPECT_TRUE(result.is_ok()) << result.status().to_string();
  return result.is_ok() ? *result : OutputComparison{};
}

TEST(CompareOutputs, ShapeMismatchIsAnErrorNamingBothShapes) {
  const HostArray c = make_array(DataType::kFloat32, Dims{2, 3}, {1, 2, 3, 4, 5, 6});
  const HostArray r = make_array(DataType::kFloat32, Dims{3, 2}, {1, 2, 3, 4, 5, 6});
  auto result = compare_outputs(c.view(), r.view());
  ASSERT_FALSE(result.is_ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("[2,3]"), std::string::npos) << result.status().message();
  EXPECT_NE(result.status().message().find("[3,2]"), std::string::npos) << result.status().message();
}

TEST(CompareOutputs, DynamicShapeIsAnError) {
  const HostArray r = make_array(DataType::kFloat32, {1, 2});
  ArrayView dynamic = r.view();
  dynamic.shape = Dims{-1};
  EXPECT_FALSE(compare_outputs(dynamic, dynamic).is_ok());
}

TEST(CompareOutputs, ToleranceMustBeFiniteAndNonNegative) {
  const HostArray r = make_array(DataType::kFloat32, {1, 2});
  for (const Tolerance bad : {Tolerance{-1, 0}, Tolerance{0, -1}, Tolerance{kNaN, 0}, Tolerance{0, kInf}}) {
    auto result = compare_outputs(r.view(), r.view(), bad.atol, bad.rtol);
    ASSERT_FALSE(result.is_ok());
    EXPECT_NE(result.status().message().find(bad.atol != 0 ? "atol" : "rtol"), std::string::npos);
  }
}

TEST(CompareOutputs, UnknownMetricIsAnErrorListingTheKnownOnes) {
  const HostArray r = make_array(DataType::kFloat32, {1, 2});
  CompareOptions options;
  options.metrics = {"psnr", "ssim"};
  auto result = compare_outputs(r.view(), r.view(), options);
  ASSERT_FALSE(result.is_ok());
  EXPECT_NE(result.status().message().find("'ssim'"), std::string::npos);
  EXPECT_NE(result.status().message().find("psnr"), std::string::npos);
}

TEST(CompareOutputs, EmptyArraysAreIdenticalWithNoWorstElement) {
  const HostArray empty = make_array(DataType::kFloat32, Dims{0, 4}, {});
  const OutputComparison result = compare_ok(empty, empty, Tolerance{0, 0});
  EXPECT_EQ(result.element_count, 0);
  EXPECT_EQ(result.max_abs_error, 0.0);
  EXPECT_EQ(result.rel_l2_error, 0.0);
  EXPECT_EQ(result.cosine_similarity, 1.0);
  ASSERT_TRUE(result.tolerance_check);
  EXPECT_EQ(result.tolerance_check->outside_count, 0);
  EXPECT_EQ(result.tolerance_check->outside_fraction, 0.0);
  EXPECT_FALSE(result.tolerance_check->worst);
}

TEST(CompareOutputs, AllZeroReference) {
  const HostArray zero = make_array(DataType::kFloat32, {0, 0, 0});
  const HostArray nonzero = make_array(DataType::kFloat32, {0, 1, 0});

  const OutputComparison both_zero = compare_ok(zero, zero);
  EXPECT_EQ(both_zero.rel_l2_error, 0.0);
  EXPECT_EQ(both_zero.cosine_similarity, 1.0);

  const OutputComparison candidate_nonzero = compare_ok(nonzero, zero);
  EXPECT_EQ(candidate_nonzero.rel_l2_error, kInf);
  EXPECT_EQ(candidate_nonzero.cosine_similarity, 0.0);

  // The other way round nothing is special: ||0 - r|| / ||r|| is exactly 1.
  const OutputComparison candidate_zero = compare_ok(zero, nonzero);
  EXPECT_EQ(candidate_zero.rel_l2_error, 1.0);
  EXPECT_EQ(candidate_zero.cosine_similarity, 0.0);
}

TEST(CompareOutputs, NonFiniteValuesAreCountedAndExcludedFromFiniteMetrics) {
  const HostArray c = make_array(DataType::kFloat32, {1, kNaN, kInf, -kInf, kNaN, 2});
  const HostArray r = make_array(DataType::kFloat32, {1, 5, kInf, kInf, kNaN, 2});
  const OutputComparison result = compare_ok(c, r, Tolerance{0, 0});
  EXPECT_EQ(result.candidate_non_finite.nan, 2);
  EXPECT_EQ(result.candidate_non_finite.posinf, 1);
  EXPECT_EQ(result.candidate_non_finite.neginf, 1);
  EXPECT_EQ(result.reference_non_finite.nan, 1);
  EXPECT_EQ(result.reference_non_finite.posinf, 2);
  EXPECT_EQ(result.reference_non_finite.neginf, 0);
  EXPECT_EQ(result.finite_pair_count, 2);
  EXPECT_EQ(result.max_abs_error, 0.0);
  EXPECT_EQ(result.rel_l2_error, 0.0);
  EXPECT_EQ(result.cosine_similarity, 1.0);
  // NaN vs 5 and -inf vs +inf are outside; +inf vs +inf and NaN vs NaN are not.
  ASSERT_TRUE(result.tolerance_check);
  EXPECT_EQ(result.tolerance_check->outside_count, 2);
  ASSERT_TRUE(result.tolerance_check->worst);
  EXPECT_EQ(result.tolerance_check->worst->index, std::vector<int64_t>{1});
  EXPECT_EQ(result.tolerance_check->worst->excess, kInf);
  EXPECT_TRUE(std::isnan(result.tolerance_check->worst->candidate));
  EXPECT_EQ(result.tolerance_check->worst->reference, 5.0);
}

TEST(CompareOutputs, OnlyMatchingNonFinitePositionsLeaveNoWorstElement) {
  const HostArray c = make_array(DataType::kFloat64, {kNaN, kInf});
  const OutputComparison result = compare_ok(c, c, Tolerance{0, 0});
  EXPECT_EQ(result.tolerance_check->outside_count, 0);
  EXPECT_FALSE(result.tolerance_check->worst);
}

TEST(CompareOutputs, WorstElementIsTheFirstLargestExcessAsAMultiIndex) {
  // |c - r| = 0, 3, 1, 3, 0, 2 with atol = rtol = 0: the excess ties at flat 1 and 3.
  const HostArray c = make_array(DataType::kFloat32, Dims{2, 3}, {0, 3, 1, 3, 0, 2});
  const HostArray r = make_array(DataType::kFloat32, Dims{2, 3}, {0, 0, 0, 0, 0, 0});
  const OutputComparison result = compare_ok(c, r, Tolerance{0, 0});
  ASSERT_TRUE(result.tolerance_check->worst);
  EXPECT_EQ(result.tolerance_check->worst->index, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(result.tolerance_check->worst->candidate, 3.0);
  EXPECT_EQ(result.tolerance_check->outside_count, 4);
}

TEST(CompareOutputs, WorstExcessIsNegativeWhenEveryElementIsInside) {
  const HostArray c = make_array(DataType::kFloat64, {1.0, 2.0});
  const HostArray r = make_array(DataType::kFloat64, {1.0, 2.5});
  const OutputComparison result = compare_ok(c, r, Tolerance{1.0, 0.0});
  EXPECT_EQ(result.tolerance_check->outside_count, 0);
  ASSERT_TRUE(result.tolerance_check->worst);
  EXPECT_EQ(result.tolerance_check->worst->index, std::vector<int64_t>{1});
  EXPECT_EQ(result.tolerance_check->worst->excess, 0.5 - 1.0);
}

TEST(CompareOutputs, ToleranceRuleIsAtolPlusRtolTimesReference) {
  // |c - r| = 1 for both; the bound atol + rtol*|r| is 0.5 + 0.1*10 = 1.5 and 0.5 + 0.1*1 = 0.6.
  const HostArray c = make_array(DataType::kFloat64, {11.0, 2.0});
  const HostArray r = make_array(DataType::kFloat64, {10.0, 1.0});
  const OutputComparison result = compare_ok(c, r, Tolerance{0.5, 0.1});
  EXPECT_EQ(result.tolerance_check->outside_count, 1);
  EXPECT_EQ(result.tolerance_check->worst->index, std::vector<int64_t>{1});
  // The reference scales the bound: 1 > 0.095*10 but 1 <= 0.095*11.
  const HostArray ten = make_array(DataType::kFloat64, {10.0});
  const HostArray eleven = make_array(DataType::kFloat64, {11.0});
  EXPECT_EQ(compare_ok(eleven, ten, Tolerance{0, 0.095}).tolerance_check->outside_count, 1);
  EXPECT_EQ(compare_ok(ten, eleven, Tolerance{0, 0.095}).tolerance_check->outside_count, 0);
}

TEST(CompareOutputs, EveryDataTypeIsReadExactly) {
  // 0 and 1 exist in every type; a candidate of each type equals an fp64 reference exactly.
  std::vector<double> values;
  for (int i = 0; i < 1000; ++i) values.push_back((i * 7 % 3) == 0 ? 1.0 : 0.0);
  const HostArray reference = make_array(DataType::kFloat64, values);
  for (const DataType type : all_data_types()) {
    SCOPED_TRACE(std::string(data_type_name(type)));
    const HostArray typed = make_array(type, values);
    const OutputComparison forward = compare_ok(typed, reference, Tolerance{0, 0});
    EXPECT_EQ(forward.candidate_dtype, type);
    EXPECT_EQ(forward.max_abs_error, 0.0);
    EXPECT_EQ(forward.rel_l2_error, 0.0);
    EXPECT_EQ(forward.tolerance_check->outside_count, 0);
    const OutputComparison backward = compare_ok(reference, typed);
    EXPECT_EQ(backward.max_abs_error, 0.0);
    EXPECT_EQ(backward.cosine_similarity, 1.0);
  }
}

TEST(CompareOutputs, NarrowFloatsKeepTheirNonFiniteValues) {
  const std::vector<double> values = {1.0, kNaN, kInf, -kInf};
  const HostArray reference = make_array(DataType::kFloat32, values);
  for (const DataType type : {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat8E5M2}) {
    const OutputComparison result = compare_ok(make_array(type, values), reference, Tolerance{0, 0});
    EXPECT_EQ(result.candidate_non_finite.nan, 1);
    EXPECT_EQ(result.candidate_non_finite.posinf, 1);
    EXPECT_EQ(result.candidate_non_finite.neginf, 1);
    EXPECT_EQ(result.tolerance_check->outside_count, 0);
  }
  // e4m3 has no infinity: inf converts to NaN.
  const OutputComparison e4m3 = compare_ok(make_array(DataType::kFloat8E4M3, values), reference);
  EXPECT_EQ(e4m3.candidate_non_finite.nan, 3);
}

// The definitions of docs/compare.md written as plainly as possible, one element at a time.
struct PlainMetrics {
  int64_t c_nan = 0, c_inf = 0, r_nan = 0, r_inf = 0, outside = 0, worst = -1;
  double max_abs = 0, dd = 0, rr = 0, cc = 0, cr = 0, worst_excess = -kInf;

  double rel_l2() const { return rr == 0 ? (dd == 0 ? 0 : kInf) : std::sqrt(dd) / std::sqrt(rr); }
  double cosine() const {
    if (cc == 0 || rr == 0) return cc == rr ? 1 : 0;
    return cr / (std::sqrt(cc) * std::sqrt(rr));
  }
};

// Equal up to the rounding of a different summation order.
void expect_close(double got, double want) {
  if (!std::isfinite(want)) {
    EXPECT_EQ(got, want);
  } else {
    EXPECT_NEAR(got, want, 1e-13 * std::max(1.0, std::fabs(want)));
  }
}

PlainMetrics plain_metrics(const std::vector<double>& c, const std::vector<double>& r, Tolerance t) {
  PlainMetrics m;
  for (size_t i = 0; i < c.size(); ++i) {
    m.c_nan += std::isnan(c[i]);
    m.c_inf += std::isinf(c[i]);
    m.r_nan += std::isnan(r[i]);
    m.r_inf += std::isinf(r[i]);
    double excess;
    if (std::isfinite(c[i]) && std::isfinite(r[i])) {
      const double d = c[i] - r[i];
      m.max_abs = std::max(m.max_abs, std::fabs(d));
      m.dd += d * d;
      m.rr += r[i] * r[i];
      m.cc += c[i] * c[i];
      m.cr += c[i] * r[i];
      excess = std::fabs(d) - (t.atol + t.rtol * std::fabs(r[i]));
    } else if ((std::isnan(c[i]) && std::isnan(r[i])) || c[i] == r[i]) {
      continue;
    } else {
      excess = kInf;
    }
    if (excess > 0) ++m.outside;
    if (m.worst < 0 || excess > m.worst_excess) {
      m.worst = static_cast<int64_t>(i);
      m.worst_excess = excess;
    }
  }
  return m;
}

TEST(CompareOutputs, AgreesWithThePlainDefinitionsOnEveryLengthAndNonFinitePlacement) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> uniform;
  const Tolerance tolerance{1e-3, 1e-2};
  for (const size_t length : {1, 7, 8, 9, 1023, 1024, 1025, 2055, 70001}) {
    for (const double special_rate : {0.0, 0.001, 0.3}) {
      SCOPED_TRACE(::testing::Message() << "length " << length << ", non-finite rate " << special_rate);
      std::vector<double> c(length), r(length);
      for (size_t i = 0; i < length; ++i) {
        r[i] = normal(rng);
        c[i] = r[i] + 0.01 * normal(rng);
        for (double* side : {&c[i], &r[i]}) {
          if (uniform(rng) < special_rate) *side = uniform(rng) < 0.5 ? kNaN : (uniform(rng) < 0.5 ? kInf : -kInf);
        }
      }
      const HostArray ca = make_array(DataType::kFloat32, c), ra = make_array(DataType::kFloat32, r);
      // Compare against what fp32 storage holds.
      for (size_t i = 0; i < length; ++i) {
        c[i] = ca.data_as<float>()[i];
        r[i] = ra.data_as<float>()[i];
      }
      const PlainMetrics want = plain_metrics(c, r, tolerance);
      const OutputComparison got = compare_ok(ca, ra, tolerance);
      EXPECT_EQ(got.candidate_non_finite.nan, want.c_nan);
      EXPECT_EQ(got.candidate_non_finite.posinf + got.candidate_non_finite.neginf, want.c_inf);
      EXPECT_EQ(got.reference_non_finite.nan, want.r_nan);
      EXPECT_EQ(got.reference_non_finite.posinf + got.reference_non_finite.neginf, want.r_inf);
      EXPECT_EQ(got.max_abs_error, want.max_abs);
      expect_close(got.rel_l2_error, want.rel_l2());
      expect_close(got.cosine_similarity, want.cosine());
      EXPECT_EQ(got.tolerance_check->outside_count, want.outside);
      ASSERT_EQ(got.tolerance_check->worst.has_value(), want.worst >= 0);
      if (want.worst >= 0) {
        EXPECT_EQ(got.tolerance_check->worst->index, std::vector<int64_t>{want.worst});
        EXPECT_EQ(got.tolerance_check->worst->excess, want.worst_excess);
      }
    }
  }
}

TEST(CompareOutputs, ResultsDoNotDependOnTheThreadCount) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal;
  std::vector<double> c(1 << 19), r(1 << 19);
  for (size_t i = 0; i < c.size(); ++i) {
    r[i] = normal(rng);
    c[i] = i % 99991 == 5 ? kNaN : r[i] * (1 + 1e-4 * normal(rng));
  }
  const HostArray ca = make_array(DataType::kFloat32, c), ra = make_array(DataType::kFloat64, r);
  const OutputComparison one = compare_ok(ca, ra, Tolerance{1e-6, 1e-5}, 1);
  for (const unsigned threads : {2u, 3u, 8u, 0u}) {
    const OutputComparison many = compare_ok(ca, ra, Tolerance{1e-6, 1e-5}, threads);
    EXPECT_EQ(many.rel_l2_error, one.rel_l2_error) << threads;  // bit-identical, not merely close
    EXPECT_EQ(many.cosine_similarity, one.cosine_similarity) << threads;
    EXPECT_EQ(many.max_abs_error, one.max_abs_error) << threads;
    EXPECT_EQ(many.l2_error, one.l2_error) << threads;
    EXPECT_EQ(many.candidate_non_finite.nan, one.candidate_non_finite.nan) << threads;
    EXPECT_EQ(many.tolerance_check->outside_count, one.tolerance_check->outside_count) << threads;
    EXPECT_EQ(many.tolerance_check->worst->index, one.tolerance_check->worst->index) << threads;
  }
}

TEST(CompareOutputs, ConvenienceOverloadChecksTheTolerance) {
  const HostArray c = make_array(DataType::kFloat32, {1.0, 2.0});
  const HostArray r = make_array(DataType::kFloat32, {1.0, 2.5});
  auto result = compare_outputs(c.view(), r.view(), 0.1, 0.0);
  ASSERT_TRUE(result.is_ok());
  ASSERT_TRUE(result->tolerance_check);
  EXPECT_EQ(result->tolerance_check->tolerance.atol, 0.1);
  EXPECT_EQ(result->tolerance_check->outside_count, 1);
  EXPECT_FALSE(compare_outputs(c.view(), r.view())->tolerance_check);
}

TEST(CompareOutputsNamed, RecordsMissingExtraAndMismatchedOutputs) {
  const HostArray a = make_array(DataType::kFloat32, {1, 2});
  const HostArray b = make_array(DataType::kFloat32, {1, 2, 3});
  const NamedArrayViews candidate = {{"same", a.view()}, {"reshaped", a.view()}, {"extra", a.view()}};
  const NamedArrayViews reference = {{"same", a.view()}, {"reshaped", b.view()}, {"missing", a.view()}};
  auto report = compare_outputs(candidate, reference);
  ASSERT_TRUE(report.is_ok()) << report.status().to_string();
  EXPECT_EQ(report->outputs.size(), 1u);
  EXPECT_EQ(report->outputs.count("same"), 1u);
  ASSERT_EQ(report->shape_mismatches.count("reshaped"), 1u);
  EXPECT_EQ(report->shape_mismatches.at("reshaped").reference_shape, (Dims{3}));
  EXPECT_EQ(report->missing_outputs, std::vector<std::string>{"missing"});
  EXPECT_EQ(report->extra_outputs, std::vector<std::string>{"extra"});
}

TEST(CompareOutputsNamed, PerOutputToleranceOverridesTheDefault) {
  const HostArray c = make_array(DataType::kFloat32, {1.0, 2.0});
  const HostArray r = make_array(DataType::kFloat32, {1.0, 2.5});
  CompareOptions options;
  options.tolerance = Tolerance{0, 0};
  options.output_tolerance["loose"] = Tolerance{1, 0};
  auto report = compare_outputs({{"strict", c.view()}, {"loose", c.view()}}, {{"strict", r.view()}, {"loose", r.view()}},
                                options);
  ASSERT_TRUE(report.is_ok());
  EXPECT_EQ(report->outputs.at("strict").tolerance_check->outside_count, 1);
  EXPECT_EQ(report->outputs.at("loose").tolerance_check->outside_count, 0);
}

TEST(CompareOutputsNamed, ErrorsNameTheOutput) {
  const HostArray r = make_array(DataType::kFloat32, {1, 2});
  ArrayView no_data = r.view();
  no_data.data = nullptr;
  auto report = compare_outputs({{"logits", no_data}}, {{"logits", r.view()}});
  ASSERT_FALSE(report.is_ok());
  EXPECT_NE(report.status().message().find("'logits'"), std::string::npos) << report.status().message();
}

TEST(ExtraMetrics, UserMetricsSitBesideTheBuiltInOnes) {
  MetricRegistry registry = builtin_metrics();
  ASSERT_TRUE(registry
                  .add({"max_ratio", "max |c| / max |r|",
                        [](const MetricInput& in) -> Result<double> {
                          double cmax = 0;
                          for (int64_t i = 0; i < in.candidate.element_count(); ++i)
                            cmax = std::max(cmax, std::fabs(load_as_double(in.candidate.dtype, in.candidate.data, i)));
                          return cmax / in.summary.max_abs_reference;
                        }})
                  .is_ok());
  const HostArray c = make_array(DataType::kFloat32, {1.0, -4.0});
  const HostArray r = make_array(DataType::kFloat32, {1.0, -2.0});
  CompareOptions options;
  options.registry = &registry;
  options.metrics = {"max_ratio", "snr"};
  auto result = compare_outputs(c.view(), r.view(), options);
  ASSERT_TRUE(result.is_ok()) << result.status().to_string();
  EXPECT_EQ(result->metrics.at("max_ratio"), 2.0);
  EXPECT_EQ(result->metrics.count("snr"), 1u);
}

TEST(ExtraMetrics, RegistryRejectsBadAndDuplicateNames) {
  MetricRegistry registry = builtin_metrics();
  const auto zero = [](const MetricInput&) -> Result<double> { return 0.0; };
  EXPECT_FALSE(registry.add({"psnr", "again", zero}).is_ok());
  EXPECT_FALSE(registry.add({"Bad Name", "", zero}).is_ok());
  EXPECT_FALSE(registry.add({"", "", zero}).is_ok());
  EXPECT_FALSE(registry.add({"no_function", "", nullptr}).is_ok());
  EXPECT_EQ(builtin_metrics().names(), (std::vector<std::string>{"mse", "psnr", "snr"}));
}

TEST(ExtraMetrics, MetricErrorsNameTheMetric) {
  MetricRegistry registry;
  ASSERT_TRUE(registry.add({"broken", "", [](const MetricInput&) -> Result<double> {
                              return Status(StatusCode::kInvalidArgument, "no peak");
                            }}).is_ok());
  const HostArray r = make_array(DataType::kFloat32, {1, 2});
  CompareOptions options;
  options.registry = &registry;
  options.metrics = {"broken"};
  auto result = compare_outputs(r.view(), r.view(), options);
  ASSERT_FALSE(result.is_ok());
  EXPECT_NE(result.status().message().find("'broken'"), std::string::npos);
}

TEST(ExtraMetrics, PsnrAndSnrAreInfiniteForIdenticalOutputs) {
  const HostArray r = make_array(DataType::kFloat32, {1, 2});
  CompareOptions options;
  options.metrics = {"psnr", "snr", "mse"};
  auto result = compare_outputs(r.view(), r.view(), options);
  ASSERT_TRUE(result.is_ok());
  EXPECT_EQ(result->metrics.at("psnr"), kInf);
  EXPECT_EQ(result->metrics.at("snr"), kInf);
  EXPECT_EQ(result->metrics.at("mse"), 0.0);
}

}  // namespace
}  // namespace tensoracle
