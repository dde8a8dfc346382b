#include "workflow/gates.h"

#include <fmt/format.h>

#include <cmath>

#include "bench/bench_json.h"
#include "core/lookup.h"
#include "tensoracle/float_formats.h"

namespace tensoracle::workflow {

using nlohmann::json;

namespace {

constexpr int kBinsPerDecade = 5;

json limit_lines(const OutputLimits& l) {
  json lines = json::array();
  if (l.max_abs_error) lines.push_back({{"name", "max_abs_error"}, {"value", *l.max_abs_error}});
  if (l.tolerance) lines.push_back({{"name", "atol"}, {"value", l.tolerance->atol}});
  return lines;
}

}  // namespace

std::string violation_margin(const Violation& v) {
  if (!v.value || !v.threshold || !std::isfinite(*v.value)) return "";
  const double by = std::fabs(*v.value - *v.threshold);
  // A ratio only says something for upper bounds ("3x the allowed error").
  if (v.limit.rfind("max_", 0) == 0 && *v.threshold > 0 && std::isfinite(*v.threshold))
    return fmt::format(" (by {:.3g}; {:.3g}x the limit)", by, *v.value / *v.threshold);
  return fmt::format(" (by {:.3g})", by);
}

json error_histogram(const ArrayView& candidate, const ArrayView& reference) {
  const size_t n = static_cast<size_t>(candidate.element_count());
  std::vector<double> errors;
  errors.reserve(n);
  int64_t zeros = 0, non_finite = 0;
  for (size_t i = 0; i < n; ++i) {
    const double c = load_as_double(candidate.dtype, candidate.data, i), r = load_as_double(reference.dtype, reference.data, i);
    if (!std::isfinite(c) || !std::isfinite(r)) {
      ++non_finite;
      continue;
    }
    const double e = std::fabs(c - r);
    if (e == 0) ++zeros;
    else errors.push_back(e);
  }
  json out = {{"bins_per_decade", kBinsPerDecade}, {"zero_count", zeros}, {"non_finite_count", non_finite},
              {"low_exponent", 0},                 {"counts", json::array()}};
  if (errors.empty()) return out;
  double lo = errors.front(), hi = errors.front();
  for (double e : errors) lo = std::min(lo, e), hi = std::max(hi, e);
  const int low = static_cast<int>(std::floor(std::log10(lo))), high = static_cast<int>(std::floor(std::log10(hi))) + 1;
  std::vector<int64_t> counts(static_cast<size_t>((high - low) * kBinsPerDecade), 0);
  for (double e : errors) {
    const int bin = static_cast<int>(std::floor((std::log10(e) - low) * kBinsPerDecade));
    ++counts[static_cast<size_t>(std::clamp(bin, 0, static_cast<int>(counts.size()) - 1))];
  }
  out["low_exponent"] = low;
  out["counts"] = counts;
  return out;
}

Result<GateOutcome> quality_gate(const std::string& gate, const std::string& against, const NamedArrays& candidate,
                                 const NamedArrays& reference, const Limits& limits, const MetricRegistry& registry) {
  CompareOptions base;
  base.registry = &registry;
  const CompareOptions options = compare_options_for(limits, base);
  TO_ASSIGN_OR_RETURN(ComparisonReport report, compare_outputs(views_of(candidate), views_of(reference), options));
  TO_ASSIGN_OR_RETURN(GateResult result, evaluate_gate(report, limits));
  GateOutcome out;
  out.passed = result.passed;
  json violations = json::array();
  for (const Violation& v : result.violations) {
    out.failures.push_back(fmt::format("{} (against {}): {}{}", gate, against, v.message, violation_margin(v)));
    violations.push_back({{"output", v.output},
                          {"limit", v.limit},
                          {"value", v.value ? bench::number_json(*v.value) : json(nullptr)},
                          {"threshold", v.threshold ? bench::number_json(*v.threshold) : json(nullptr)},
                          {"message", v.message + violation_margin(v)}});
  }
  json histograms = json::object();
  for (const auto& [name, c] : report.outputs) {
    // compare_outputs reports only the outputs both sides hold.
    const HostArray* c_array = lookup(candidate, name);
    const HostArray* r_array = lookup(reference, name);
    TO_ASSERT(c_array != nullptr && r_array != nullptr);
    json h = error_histogram(c_array->view(), r_array->view());
    h["limits"] = limit_lines(limits.for_output(name));
    histograms[name] = h;
  }
  json comparison = json::parse(comparison_json(report, result), nullptr, false);
  out.record = {{"gate", gate},
                {"against", against},
                {"passed", result.passed},
                {"outputs", comparison.value("outputs", json::object())},
                {"violations", violations},
                {"error_histograms", histograms}};
  return out;
}

}  // namespace tensoracle::workflow

namespace tensoracle::workflow {

namespace {

json output_limits_json(const OutputLimits& l) {
  const auto opt = [](const std::optional<double>& v) { return v ? bench::number_json(*v) : json(nullptr); };
  json metrics = json::object();
  for (const auto& [name, b] : l.metrics) metrics[name] = {{"min", opt(b.min)}, {"max", opt(b.max)}};
  return {{"atol", l.tolerance ? json(l.tolerance->atol) : json(nullptr)},
          {"rtol", l.tolerance ? json(l.tolerance->rtol) : json(nullptr)},
          {"max_abs_error", opt(l.max_abs_error)},
          {"max_rel_l2_error", opt(l.max_rel_l2_error)},
          {"min_cosine_similarity", opt(l.min_cosine_similarity)},
          {"max_outside_tolerance_count", l.max_outside_tolerance_count ? json(*l.max_outside_tolerance_count) : json(nullptr)},
          {"max_outside_tolerance_fraction", opt(l.max_outside_tolerance_fraction)},
          {"allow_non_finite", l.allow_non_finite},
          {"metrics", metrics}};
}

}  // namespace

json limits_json(const Limits& limits) {
  json outputs = json::object();
  for (const auto& [name, l] : limits.outputs) outputs[name] = output_limits_json(l);
  return {{"default", output_limits_json(limits.defaults)},
          {"outputs", outputs},
          {"allow_missing_outputs", limits.allow_missing_outputs},
          {"allow_extra_outputs", limits.allow_extra_outputs}};
}

}  // namespace tensoracle::workflow
