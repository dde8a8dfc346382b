// comparison_json and comparison_table: the documented schema, and non-finite numbers in JSON.
#include <gtest/gtest.h>

#include <limits>

#include <nlohmann/json.hpp>

#include "host/compare/compare_test_util.h"
#include "tensoracle/compare.h"

namespace tensoracle {
namespace {

using nlohmann::json;
using testing::make_array;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Reported {
  ComparisonReport report;
  GateResult gate;
};

Reported compare_and_gate(const NamedArrayViews& c, const NamedArrayViews& r, std::optional<Tolerance> tolerance) {
  CompareOptions options;
  options.tolerance = tolerance;
  options.metrics = {"psnr"};
  auto report = compare_outputs(c, r, options);
  EXPECT_TRUE(report.is_ok()) << report.status().to_string();
  auto gate = evaluate_gate(*report, Limits{});
  EXPECT_TRUE(gate.is_ok()) << gate.status().to_string();
  return {*report, *gate};
}

TEST(ComparisonJson, HasEveryDocumentedField) {
  const HostArray c = make_array(DataType::kFloat16, Dims{2, 2}, {1, 2, 3, 5});
  const HostArray r = make_array(DataType::kFloat32, Dims{2, 2}, {1, 2, 3, 4});
  const Reported result = compare_and_gate({{"y", c.view()}}, {{"y", r.view()}}, Tolerance{0, 0.1});
  const json doc = json::parse(comparison_json(result.report, result.gate));

  for (const char* key : {"outputs", "passed", "violations", "missing_outputs", "extra_outputs"}) {
    EXPECT_TRUE(doc.contains(key)) << key;
  }
  const json& y = doc["outputs"]["y"];
  for (const char* key :
       {"shape", "dtype", "candidate_nan", "candidate_posinf", "candidate_neginf", "reference_nan", "reference_posinf",
        "reference_neginf", "max_abs_error", "rel_l2_error", "cosine_similarity", "outside_tolerance_count",
        "outside_tolerance_fraction", "worst_index", "worst_candidate", "worst_reference"}) {
    EXPECT_TRUE(y.contains(key)) << key;
  }
  EXPECT_EQ(y["shape"], json::array({2, 2}));
  EXPECT_EQ(y["dtype"], "fp16");
  EXPECT_EQ(y["reference_dtype"], "fp32");
  EXPECT_EQ(y["max_abs_error"], result.report.outputs.at("y").max_abs_error);
  EXPECT_EQ(y["outside_tolerance_count"], 1);
  EXPECT_EQ(y["worst_index"], json::array({1, 1}));
  EXPECT_EQ(y["worst_candidate"], 5.0);
  EXPECT_EQ(y["worst_reference"], 4.0);
  EXPECT_TRUE(y["metrics"]["psnr"].is_number());
  EXPECT_EQ(doc["passed"], false);
  ASSERT_EQ(doc["violations"].size(), 1u);
  EXPECT_EQ(doc["violations"][0]["limit"], "max_outside_tolerance_count");
  EXPECT_EQ(doc["violations"][0]["value"], 1.0);
  EXPECT_EQ(doc["violations"][0]["threshold"], 0.0);
}

TEST(ComparisonJson, WritesNonFiniteNumbersAsStringsAndAbsentValuesAsNull) {
  const HostArray c = make_array(DataType::kFloat32, {1, kNaN});
  const HostArray zero = make_array(DataType::kFloat32, {0, 0});
  const Reported result = compare_and_gate({{"y", c.view()}}, {{"y", zero.view()}}, std::nullopt);
  const json y = json::parse(comparison_json(result.report, result.gate))["outputs"]["y"];
  EXPECT_EQ(y["rel_l2_error"], "inf");
  EXPECT_EQ(y["metrics"]["psnr"], "-inf");
  EXPECT_EQ(y["candidate_nan"], 1);
  for (const char* key : {"outside_tolerance_count", "outside_tolerance_fraction", "worst_index", "worst_candidate",
                          "worst_reference", "atol", "rtol"}) {
    EXPECT_TRUE(y[key].is_null()) << key;
  }

  const HostArray nan = make_array(DataType::kFloat32, {kNaN});
  const HostArray one = make_array(DataType::kFloat32, {1});
  const Reported worst = compare_and_gate({{"y", nan.view()}}, {{"y", one.view()}}, Tolerance{0, 0});
  const json w = json::parse(comparison_json(worst.report, worst.gate))["outputs"]["y"];
  EXPECT_EQ(w["worst_candidate"], "nan");
  EXPECT_EQ(w["worst_excess"], "inf");
}

TEST(ComparisonJson, StructuralProblemsAreListed) {
  const HostArray a = make_array(DataType::kFloat32, {1, 2});
  const HostArray b = make_array(DataType::kInt32, {1, 2, 3});
  const Reported result =
      compare_and_gate({{"y", a.view()}, {"extra", a.view()}}, {{"y", b.view()}, {"gone", a.view()}}, std::nullopt);
  const json doc = json::parse(comparison_json(result.report, result.gate));
  EXPECT_EQ(doc["outputs"]["y"]["error"], "shape mismatch");
  EXPECT_EQ(doc["outputs"]["y"]["shape"], json::array({2}));
  EXPECT_EQ(doc["outputs"]["y"]["reference_shape"], json::array({3}));
  EXPECT_EQ(doc["outputs"]["y"]["reference_dtype"], "int32");
  EXPECT_EQ(doc["missing_outputs"], json::array({"gone"}));
  EXPECT_EQ(doc["extra_outputs"], json::array({"extra"}));
  EXPECT_EQ(doc["violations"].size(), 3u);
  EXPECT_TRUE(doc["violations"][0]["value"].is_null());
}

TEST(ComparisonTable, ShowsEachOutputTheViolationsAndTheVerdict) {
  const HostArray c = make_array(DataType::kFloat32, {1, kInf});
  const HostArray r = make_array(DataType::kFloat32, {1, 2});
  const Reported failed = compare_and_gate({{"logits", c.view()}}, {{"logits", r.view()}}, Tolerance{0, 0});
  const std::string table = comparison_table(failed.report, failed.gate);
  EXPECT_NE(table.find("logits"), std::string::npos);
  EXPECT_NE(table.find("1 +inf"), std::string::npos) << table;
  EXPECT_NE(table.find("violation: output 'logits'"), std::string::npos) << table;
  EXPECT_NE(table.find("FAILED (2 violations)"), std::string::npos) << table;

  const Reported passed = compare_and_gate({{"logits", r.view()}}, {{"logits", r.view()}}, std::nullopt);
  EXPECT_NE(comparison_table(passed.report, passed.gate).find("PASSED"), std::string::npos);
}

}  // namespace
}  // namespace tensoracle
