// evaluate_gate: checks a comparison report against limits and lists every violated limit.
#include <cmath>
#include <set>

#include "core/errors.h"
#include "tensoracle/compare.h"

namespace tensoracle {
namespace {

class Gate {
 public:
  void add(const std::string& output, std::string limit, std::optional<double> value, std::optional<double> threshold,
           std::string message) {
    result_.violations.push_back(Violation{output, std::move(limit), value, threshold, std::move(message)});
    result_.passed = false;
  }

  // A metric against an upper bound; NaN can never be shown to be within it.
  void at_most(const std::string& output, const std::string& limit, const char* metric, double value,
               std::optional<double> maximum) {
    if (!maximum || value <= *maximum) return;
    add(output, limit, value, *maximum,
        fmt::format("output '{}': {} {} exceeds the limit {}", output, metric, value, *maximum));
  }

  void at_least(const std::string& output, const std::string& limit, const char* metric, double value,
                std::optional<double> minimum) {
    if (!minimum || value >= *minimum) return;
    add(output, limit, value, *minimum,
        fmt::format("output '{}': {} {} is below the limit {}", output, metric, value, *minimum));
  }

  void non_finite(const std::string& output, const char* side, const NonFiniteCounts& counts) {
    if (counts.total() == 0) return;
    add(output, "allow_non_finite", static_cast<double>(counts.total()), 0.0,
        fmt::format("output '{}': the {} has {} non-finite values ({} NaN, {} +inf, {} -inf) and the limits do "
                    "not allow any",
                    output, side, counts.total(), counts.nan, counts.posinf, counts.neginf));
  }

  GateResult take() { return std::move(result_); }

 private:
  GateResult result_;
};

Status check_output(const std::string& name, const OutputComparison& c, const OutputLimits& limits, Gate& gate) {
  if (!limits.allow_non_finite) {
    gate.non_finite(name, "candidate", c.candidate_non_finite);
    gate.non_finite(name, "reference", c.reference_non_finite);
  }
  gate.at_most(name, "max_abs_error", "max_abs_error", c.max_abs_error, limits.max_abs_error);
  gate.at_most(name, "max_rel_l2_error", "rel_l2_error", c.rel_l2_error, limits.max_rel_l2_error);
  gate.at_least(name, "min_cosine_similarity", "cosine_similarity", c.cosine_similarity, limits.min_cosine_similarity);

  if (c.tolerance_check) {
    const ToleranceCheck& check = *c.tolerance_check;
    if (limits.max_outside_tolerance_count) {
      gate.at_most(name, "max_outside_tolerance_count", "outside_tolerance_count",
                   static_cast<double>(check.outside_count), static_cast<double>(*limits.max_outside_tolerance_count));
    }
    gate.at_most(name, "max_outside_tolerance_fraction", "outside_tolerance_fraction", check.outside_fraction,
                 limits.max_outside_tolerance_fraction);
  } else if (limits.max_outside_tolerance_fraction || limits.max_outside_tolerance_count.value_or(0) != 0) {
    return invalid_argument(
        "output '{}': the limits bound the elements outside the tolerance, but no tolerance (atol and rtol) was "
        "given for it",
        name);
  }

  for (const auto& [metric, bounds] : limits.metrics) {
    const auto value = c.metrics.find(metric);
    if (value == c.metrics.end())
      return invalid_argument("output '{}': the limits bound metric '{}', which was not computed", name, metric);
    gate.at_least(name, "metrics." + metric + ".min", metric.c_str(), value->second, bounds.min);
    gate.at_most(name, "metrics." + metric + ".max", metric.c_str(), value->second, bounds.max);
  }
  return Status::ok();
}

}  // namespace

Result<GateResult> evaluate_gate(const ComparisonReport& report, const Limits& limits) {
  std::set<std::string> known(report.missing_outputs.begin(), report.missing_outputs.end());
  known.insert(report.extra_outputs.begin(), report.extra_outputs.end());
  for (const auto& entry : report.outputs) known.insert(entry.first);
  for (const auto& entry : report.shape_mismatches) known.insert(entry.first);
  for (const auto& entry : limits.outputs) {
    if (known.count(entry.first) == 0)
      return invalid_argument("the limits name output '{}', which neither side has", entry.first);
  }

  Gate gate;
  for (const std::string& name : report.missing_outputs) {
    if (!limits.allow_missing_outputs)
      gate.add(name, "allow_missing_outputs", std::nullopt, std::nullopt,
               fmt::format("output '{}' is in the reference but not in the candidate", name));
  }
  for (const std::string& name : report.extra_outputs) {
    if (!limits.allow_extra_outputs)
      gate.add(name, "allow_extra_outputs", std::nullopt, std::nullopt,
               fmt::format("output '{}' is in the candidate but not in the reference", name));
  }
  for (const auto& [name, mismatch] : report.shape_mismatches) {
    gate.add(name, "shape", std::nullopt, std::nullopt,
             fmt::format("output '{}': candidate shape {} differs from reference shape {}", name,
                         mismatch.candidate_shape.to_string(), mismatch.reference_shape.to_string()));
  }
  for (const auto& [name, comparison] : report.outputs) {
    TO_RETURN_IF_ERROR(check_output(name, comparison, limits.for_output(name), gate));
  }
  return gate.take();
}

}  // namespace tensoracle
