// compare_outputs: validation, the accumulation pass, and turning its sums into metrics.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "compare/pair_stats.h"
#include "core/errors.h"
#include "tensoracle/compare.h"

namespace tensoracle {
namespace {

using compare_detail::PairInput;
using compare_detail::PairStats;

Status check_tolerance(const Tolerance& tolerance) {
  if (!(std::isfinite(tolerance.atol) && tolerance.atol >= 0))
    return invalid_argument("atol must be finite and >= 0, got {}", tolerance.atol);
  if (!(std::isfinite(tolerance.rtol) && tolerance.rtol >= 0))
    return invalid_argument("rtol must be finite and >= 0, got {}", tolerance.rtol);
  return Status::ok();
}

Result<int64_t> checked_element_count(const ArrayView& view, const char* side) {
  auto count = view.shape.element_count();
  if (!count.is_ok()) return count.status().with_context(fmt::format("{} shape {}", side, view.shape.to_string()));
  if (*count > 0 && view.data == nullptr)
    return invalid_argument("{} array of shape {} has no data", side, view.shape.to_string());
  return *count;
}

std::vector<int64_t> unravel(int64_t flat, const Dims& shape) {
  std::vector<int64_t> index(shape.rank());
  for (size_t axis = shape.rank(); axis-- > 0;) {
    index[axis] = flat % shape[axis];
    flat /= shape[axis];
  }
  return index;
}

double relative_l2(double sum_dd, double sum_rr) {
  if (sum_rr == 0.0) return sum_dd == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
  return std::sqrt(sum_dd) / std::sqrt(sum_rr);
}

double cosine(double sum_cr, double sum_cc, double sum_rr) {
  if (sum_cc == 0.0 && sum_rr == 0.0) return 1.0;
  if (sum_cc == 0.0 || sum_rr == 0.0) return 0.0;
  // One square root of the product gives exactly 1 for identical outputs (sqrt(x*x) == x);
  // the product of two roots is the fallback where the product leaves the normal range.
  const double product = sum_cc * sum_rr;
  const double cosine = std::isfinite(product) && product >= std::numeric_limits<double>::min()
                            ? sum_cr / std::sqrt(product)
                            : sum_cr / (std::sqrt(sum_cc) * std::sqrt(sum_rr));
  // Rounding may step just outside [-1, 1].
  return std::clamp(cosine, -1.0, 1.0);
}

// Squares of fp64 values beyond 2^±400 can overflow or underflow the sums; such data is summed
// again scaled by a power of two (exact), which the ratios rel_l2 and cosine do not see.
constexpr int kSafeExponent = 400;

int rescale_exponent(const PairStats& stats) {
  const double largest = std::max(stats.max_abs_candidate, stats.max_abs_reference);
  if (largest == 0.0) return 0;
  const int exponent = std::ilogb(largest);
  return (exponent > kSafeExponent || exponent < -kSafeExponent) ? exponent : 0;
}

Result<std::vector<const MetricDefinition*>> find_metrics(const CompareOptions& options) {
  const MetricRegistry& registry = options.registry != nullptr ? *options.registry : builtin_metrics();
  std::vector<const MetricDefinition*> found;
  for (const std::string& name : options.metrics) {
    const MetricDefinition* metric = registry.find(name);
    if (metric == nullptr) {
      std::string known;
      for (const std::string& candidate : registry.names()) known += (known.empty() ? "" : ", ") + candidate;
      return invalid_argument("unknown metric '{}' (known: {})", name, known);
    }
    found.push_back(metric);
  }
  return found;
}

Result<OutputComparison> compare_pair(const ArrayView& candidate, const ArrayView& reference,
                                      const std::optional<Tolerance>& tolerance,
                                      const std::vector<const MetricDefinition*>& metrics, unsigned threads) {
  TO_ASSIGN_OR_RETURN(const int64_t count, checked_element_count(candidate, "candidate"));
  TO_RETURN_IF_ERROR(checked_element_count(reference, "reference").status());
  if (candidate.shape != reference.shape) {
    return invalid_argument("shape mismatch: candidate {} vs reference {}", candidate.shape.to_string(),
                            reference.shape.to_string());
  }
  if (tolerance) TO_RETURN_IF_ERROR(check_tolerance(*tolerance));

  const PairInput input{candidate.dtype, candidate.data, reference.dtype, reference.data, count};
  const PairStats stats = compare_detail::accumulate_pair(input, tolerance ? &*tolerance : nullptr, threads);
  double sum_dd = stats.sum_dd, sum_rr = stats.sum_rr, sum_cc = stats.sum_cc, sum_cr = stats.sum_cr;
  const int exponent = rescale_exponent(stats);
  if (exponent != 0) {
    const PairStats scaled = compare_detail::accumulate_scaled_sums(input, std::ldexp(1.0, -exponent), threads);
    sum_dd = scaled.sum_dd;
    sum_rr = scaled.sum_rr;
    sum_cc = scaled.sum_cc;
    sum_cr = scaled.sum_cr;
  }

  OutputComparison result;
  result.shape = candidate.shape;
  result.candidate_dtype = candidate.dtype;
  result.reference_dtype = reference.dtype;
  result.element_count = count;
  result.candidate_non_finite = stats.candidate;
  result.reference_non_finite = stats.reference;
  result.finite_pair_count = stats.finite_pairs;
  result.max_abs_error = stats.max_abs_diff;
  result.rel_l2_error = relative_l2(sum_dd, sum_rr);
  result.cosine_similarity = cosine(sum_cr, sum_cc, sum_rr);
  result.l2_error = std::ldexp(std::sqrt(sum_dd), exponent);
  result.l2_reference = std::ldexp(std::sqrt(sum_rr), exponent);
  result.max_abs_reference = stats.max_abs_reference;
  if (tolerance) {
    ToleranceCheck check;
    check.tolerance = *tolerance;
    check.outside_count = stats.outside;
    check.outside_fraction = count == 0 ? 0.0 : static_cast<double>(stats.outside) / static_cast<double>(count);
    if (stats.has_worst) {
      check.worst = ToleranceCheck::Worst{unravel(stats.worst_index, candidate.shape), stats.worst_candidate,
                                          stats.worst_reference, stats.worst_excess};
    }
    result.tolerance_check = std::move(check);
  }
  for (const MetricDefinition* metric : metrics) {
    auto value = metric->compute(MetricInput{candidate, reference, result});
    if (!value.is_ok()) return value.status().with_context(fmt::format("metric '{}'", metric->name));
    result.metrics[metric->name] = *value;
  }
  return result;
}

}  // namespace

Result<OutputComparison> compare_outputs(const ArrayView& candidate, const ArrayView& reference,
                                         const CompareOptions& options) {
  TO_ASSIGN_OR_RETURN(auto metrics, find_metrics(options));
  return compare_pair(candidate, reference, options.tolerance, metrics, options.threads);
}

Result<OutputComparison> compare_outputs(const ArrayView& candidate, const ArrayView& reference, double atol,
                                         double rtol) {
  CompareOptions options;
  options.tolerance = Tolerance{atol, rtol};
  return compare_outputs(candidate, reference, options);
}

Result<ComparisonReport> compare_outputs(const NamedArrayViews& candidate, const NamedArrayViews& reference,
                                         const CompareOptions& options) {
  TO_ASSIGN_OR_RETURN(auto metrics, find_metrics(options));
  if (options.tolerance) TO_RETURN_IF_ERROR(check_tolerance(*options.tolerance));
  for (const auto& [name, tolerance] : options.output_tolerance) {
    TO_RETURN_IF_ERROR(check_tolerance(tolerance).with_context(fmt::format("output '{}'", name)));
  }
  ComparisonReport report;
  for (const auto& [name, c] : candidate) {
    if (reference.count(name) == 0) report.extra_outputs.push_back(name);
  }
  for (const auto& [name, r] : reference) {
    const auto c = candidate.find(name);
    if (c == candidate.end()) {
      report.missing_outputs.push_back(name);
      continue;
    }
    if (c->second.shape != r.shape) {
      report.shape_mismatches[name] = {c->second.shape, r.shape, c->second.dtype, r.dtype};
      continue;
    }
    const auto per_output = options.output_tolerance.find(name);
    const std::optional<Tolerance> tolerance =
        per_output != options.output_tolerance.end() ? std::optional<Tolerance>(per_output->second) : options.tolerance;
    TO_ASSIGN_OR_RETURN_CONTEXT(auto comparison, compare_pair(c->second, r, tolerance, metrics, options.threads),
                                fmt::format("output '{}'", name));
    report.outputs.emplace(name, std::move(comparison));
  }
  return report;
}

}  // namespace tensoracle
