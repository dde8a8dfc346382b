// Output comparison (docs/compare.md): metrics between a candidate and a reference, limits that turn
// them into a pass/fail gate, and the text and JSON reports of both.
//
//   CompareOptions options;
//   options.tolerance = Tolerance{1e-5, 1e-3};
//   TO_ASSIGN_OR_RETURN(ComparisonReport report, compare_outputs(candidate, reference, options));
//   GateResult gate = evaluate_gate(report, Limits{});    // "allclose and all finite"
//
// Definitions (docs/compare.md has the full rationale):
// - Every element is widened to fp64 exactly (64-bit integers beyond 2^53 round to nearest) and
//   every sum is accumulated in fp64. Candidate and reference may have different dtypes.
// - A position is a *finite pair* when both sides are finite there. max_abs_error, rel_l2_error,
//   cosine_similarity and the extra metrics use finite pairs only; NaN, +inf and -inf are counted
//   per side instead. Over zero finite pairs (empty arrays, all non-finite) the metrics take their
//   "identical" values: max_abs_error 0, rel_l2_error 0, cosine_similarity 1.
// - rel_l2_error = ||c - r||_2 / ||r||_2. When ||r|| = 0 it is 0 if ||c - r|| = 0, else +inf.
// - cosine_similarity = <c, r> / (||c|| ||r||). Both norms 0: 1. Exactly one norm 0: 0.
// - With a tolerance, element i is *outside* when |c_i - r_i| > atol + rtol * |r_i| (the rule of
//   numpy.isclose, with the reference as its second argument). A position where either side is
//   non-finite is inside only when both sides are equal there or both are NaN (numpy.isclose
//   with equal_nan=True); the NaN and inf counts are gated separately.
// - The *worst element* is the one with the largest excess |c - r| - (atol + rtol * |r|); a
//   non-finite mismatch has excess +inf. Ties go to the lowest flat (C-order) index. The excess is
//   negative when every element is inside. There is no worst element when no position can have
//   an excess (empty arrays, or only matching non-finite positions).
// Results do not depend on the number of threads used.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tensoracle/array.h"
#include "tensoracle/status.h"
#include "tensoracle/types.h"

namespace tensoracle {

// Absolute and relative tolerance of the element-wise check. Both finite and >= 0.
struct Tolerance {
  double atol = 0.0;
  double rtol = 0.0;
};

struct NonFiniteCounts {
  int64_t nan = 0;
  int64_t posinf = 0;
  int64_t neginf = 0;

  int64_t total() const { return nan + posinf + neginf; }
};

// The NaN, +inf and -inf elements of one array (all zero for integer and bool arrays).
NonFiniteCounts count_non_finite(const ArrayView& array);
// "all finite", or the non-zero counts: "20 NaN", "3 NaN, 1 -inf".
std::string non_finite_text(const NonFiniteCounts& counts);

// The element-wise tolerance check of one output.
struct ToleranceCheck {
  Tolerance tolerance;
  int64_t outside_count = 0;
  double outside_fraction = 0.0;  // outside_count / element_count; 0 for an empty array

  struct Worst {
    std::vector<int64_t> index;  // multi-index in the output's shape (empty for rank 0)
    double candidate = 0.0;
    double reference = 0.0;
    double excess = 0.0;  // |c - r| - (atol + rtol * |r|); +inf for a non-finite mismatch
  };
  std::optional<Worst> worst;
};

// The comparison of one candidate array with its reference.
struct OutputComparison {
  Dims shape;
  DataType candidate_dtype = DataType::kFloat32;
  DataType reference_dtype = DataType::kFloat32;
  int64_t element_count = 0;

  NonFiniteCounts candidate_non_finite;
  NonFiniteCounts reference_non_finite;
  int64_t finite_pair_count = 0;

  double max_abs_error = 0.0;
  double rel_l2_error = 0.0;
  double cosine_similarity = 1.0;

  // Over finite pairs, for metrics derived from them (PSNR, SNR, MSE). The norms are computed
  // without overflow or underflow whenever their values are representable.
  double l2_error = 0.0;           // ||c - r||_2
  double l2_reference = 0.0;       // ||r||_2
  double max_abs_reference = 0.0;  // max |r|

  std::optional<ToleranceCheck> tolerance_check;  // present when a tolerance was given

  // Extra metrics requested by name (CompareOptions::metrics), e.g. {"psnr": 48.1}.
  std::map<std::string, double> metrics;
};

// ---- Extra (model-specific) metrics ----

// What an extra metric sees: both arrays and the model-independent summary already computed.
struct MetricInput {
  const ArrayView& candidate;
  const ArrayView& reference;
  const OutputComparison& summary;
};

struct MetricDefinition {
  std::string name;         // lower-case identifier used in options, limits and reports
  std::string description;  // one line for help and docs
  std::function<Result<double>(const MetricInput&)> compute;
};

// Named extra metrics. builtin_metrics() holds:
//   psnr  10*log10(peak^2 / MSE) in dB with peak = max |r| over finite pairs (+inf when MSE is
//         0; -inf when peak is 0 and MSE is not)
//   snr   10*log10(sum r^2 / sum (c - r)^2) in dB (+inf when the error is 0; -inf when the
//         reference is 0 and the error is not)
//   mse   sum (c - r)^2 / finite_pair_count (0 with no finite pairs)
// Users copy it and add their own callbacks.
class MetricRegistry {
 public:
  // Errors when the name is empty, not lower-case [a-z0-9_], or already taken.
  Status add(MetricDefinition definition);
  const MetricDefinition* find(const std::string& name) const;
  std::vector<std::string> names() const;

 private:
  std::map<std::string, MetricDefinition> metrics_;
};

const MetricRegistry& builtin_metrics();

// Top-k agreement, a classifier's model-specific measure: the fraction of rows (every position of
// the leading dims, ranked over the last axis) whose k largest values lie at the same set of
// positions in candidate and reference (k = 1: the same arg-max). Ties go to the lower index; NaN
// ranks below every number. Errors on differing shapes, rank 0, an empty last axis, or k outside
// [1, last axis]. 1 for zero rows.
Result<double> topk_agreement(const ArrayView& candidate, const ArrayView& reference, int k);

// ---- Comparing ----

struct CompareOptions {
  // Tolerance for every output unless output_tolerance names it; none = no tolerance check.
  std::optional<Tolerance> tolerance;
  std::map<std::string, Tolerance> output_tolerance;
  // Extra metrics computed for every output, looked up in `registry` (builtin_metrics() if null).
  std::vector<std::string> metrics;
  const MetricRegistry* registry = nullptr;
  // Worker threads; 0 = one per hardware thread. Small arrays use one thread regardless.
  unsigned threads = 0;
};

// One pair. Errors (naming both shapes) when the shapes differ; on a dynamic shape, a bad
// tolerance or an unknown metric. The dtypes may differ.
Result<OutputComparison> compare_outputs(const ArrayView& candidate, const ArrayView& reference,
                                         const CompareOptions& options = {});
Result<OutputComparison> compare_outputs(const ArrayView& candidate, const ArrayView& reference, double atol,
                                         double rtol);

// A named set, matched by name.
struct ComparisonReport {
  std::map<std::string, OutputComparison> outputs;  // outputs present on both sides with one shape

  struct ShapeMismatch {
    Dims candidate_shape;
    Dims reference_shape;
    DataType candidate_dtype = DataType::kFloat32;
    DataType reference_dtype = DataType::kFloat32;
  };
  std::map<std::string, ShapeMismatch> shape_mismatches;

  std::vector<std::string> missing_outputs;  // in the reference only
  std::vector<std::string> extra_outputs;    // in the candidate only
};

// Compares every name present on both sides; shape mismatches and missing or extra names are
// recorded in the report (and fail the gate), not returned as errors. Errors as for one pair
// otherwise, prefixed with the output's name.
Result<ComparisonReport> compare_outputs(const NamedArrayViews& candidate, const NamedArrayViews& reference,
                                         const CompareOptions& options = {});

// ---- Limits and the gate ----

// Bounds on an extra metric; either may be absent.
struct MetricBounds {
  std::optional<double> min;
  std::optional<double> max;
};

// Thresholds for one output. An absent optional is not checked. The defaults make the gate
// "numpy.allclose and all finite": no NaN or inf on either side, and no element outside the
// tolerance (checked only when a tolerance is given).
struct OutputLimits {
  std::optional<Tolerance> tolerance;  // the tolerance this output is compared with, if any
  std::optional<double> max_abs_error;
  std::optional<double> max_rel_l2_error;
  std::optional<double> min_cosine_similarity;
  std::optional<int64_t> max_outside_tolerance_count = 0;
  std::optional<double> max_outside_tolerance_fraction;
  bool allow_non_finite = false;
  std::map<std::string, MetricBounds> metrics;  // extra metrics by name
};

struct Limits {
  OutputLimits defaults;
  std::map<std::string, OutputLimits> outputs;  // complete limits of named outputs
  bool allow_missing_outputs = false;
  bool allow_extra_outputs = false;

  const OutputLimits& for_output(const std::string& name) const;
};

// Parses the JSON limits format (docs/compare.md):
//   {"default": {KEY: VALUE, ...}, "outputs": {NAME: {KEY: VALUE, ...}},
//    "allow_missing_outputs": false, "allow_extra_outputs": false}
// KEYs: atol, rtol, max_abs_error, max_rel_l2_error, min_cosine_similarity,
// max_outside_tolerance_count, max_outside_tolerance_fraction, allow_non_finite,
// metrics ({NAME: {"min": x, "max": y}}). A per-output block starts from the default block; a
// null value removes a threshold. Unknown keys, wrong types and negative thresholds are errors
// naming `source` and the JSON path.
Result<Limits> parse_limits(const std::string& json_text, const std::string& source);
Result<Limits> read_limits_file(const std::string& path);

// The options that compute what `limits` checks: per-output tolerances and extra metrics, from
// `base` (whose tolerance fills outputs whose limits have none).
CompareOptions compare_options_for(const Limits& limits, CompareOptions base = {});

struct Violation {
  std::string output;
  // The limits key that failed: "max_abs_error", "metrics.psnr.min", "allow_non_finite" (value =
  // the side's non-finite count), or a structural failure without value and threshold: "shape",
  // "allow_missing_outputs", "allow_extra_outputs".
  std::string limit;
  std::optional<double> value;
  std::optional<double> threshold;
  std::string message;  // a complete sentence naming the output, the value and the threshold
};

struct GateResult {
  bool passed = true;
  std::vector<Violation> violations;
};

// Checks every output against its limits and lists every violated limit. Errors when `limits`
// names an output absent from both sides, or asks for a metric or tolerance check the report
// did not compute.
Result<GateResult> evaluate_gate(const ComparisonReport& report, const Limits& limits);

// ---- Reports ----

// One JSON object: {"outputs": {NAME: {...}}, "passed": bool, "violations": [...], ...}.
// Non-finite numbers are written as the strings "inf", "-inf" and "nan" (JSON has no such
// numbers); metrics that were not computed are null. Schema in docs/compare.md.
std::string comparison_json(const ComparisonReport& report, const GateResult& gate);

// A fixed-width table for terminals, one row per output, then the violations.
std::string comparison_table(const ComparisonReport& report, const GateResult& gate);

}  // namespace tensoracle
