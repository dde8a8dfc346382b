// comparison_json: the machine-readable report (schema in docs/compare.md).
#include <cmath>

#include <nlohmann/json.hpp>

#include "tensoracle/compare.h"

namespace tensoracle {
namespace {

using nlohmann::json;

// JSON has no inf or NaN; they are written as strings Python's float() reads back.
json number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return value;
}

json optional_number(const std::optional<double>& value) { return value ? number(*value) : json(nullptr); }

json output_json(const OutputComparison& c) {
  json out;
  out["shape"] = c.shape.values();
  out["dtype"] = data_type_name(c.candidate_dtype);
  out["reference_dtype"] = data_type_name(c.reference_dtype);
  out["element_count"] = c.element_count;
  out["candidate_nan"] = c.candidate_non_finite.nan;
  out["candidate_posinf"] = c.candidate_non_finite.posinf;
  out["candidate_neginf"] = c.candidate_non_finite.neginf;
  out["reference_nan"] = c.reference_non_finite.nan;
  out["reference_posinf"] = c.reference_non_finite.posinf;
  out["reference_neginf"] = c.reference_non_finite.neginf;
  out["finite_pair_count"] = c.finite_pair_count;
  out["max_abs_error"] = number(c.max_abs_error);
  out["rel_l2_error"] = number(c.rel_l2_error);
  out["cosine_similarity"] = number(c.cosine_similarity);

  const ToleranceCheck* check = c.tolerance_check ? &*c.tolerance_check : nullptr;
  const ToleranceCheck::Worst* worst = check != nullptr && check->worst ? &*check->worst : nullptr;
  out["atol"] = check != nullptr ? number(check->tolerance.atol) : json(nullptr);
  out["rtol"] = check != nullptr ? number(check->tolerance.rtol) : json(nullptr);
  out["outside_tolerance_count"] = check != nullptr ? json(check->outside_count) : json(nullptr);
  out["outside_tolerance_fraction"] = check != nullptr ? number(check->outside_fraction) : json(nullptr);
  out["worst_index"] = worst != nullptr ? json(worst->index) : json(nullptr);
  out["worst_candidate"] = worst != nullptr ? number(worst->candidate) : json(nullptr);
  out["worst_reference"] = worst != nullptr ? number(worst->reference) : json(nullptr);
  out["worst_excess"] = worst != nullptr ? number(worst->excess) : json(nullptr);

  json metrics = json::object();
  for (const auto& [name, value] : c.metrics) metrics[name] = number(value);
  out["metrics"] = std::move(metrics);
  return out;
}

json mismatch_json(const ComparisonReport::ShapeMismatch& m) {
  json out;
  out["error"] = "shape mismatch";
  out["shape"] = m.candidate_shape.values();
  out["reference_shape"] = m.reference_shape.values();
  out["dtype"] = data_type_name(m.candidate_dtype);
  out["reference_dtype"] = data_type_name(m.reference_dtype);
  return out;
}

}  // namespace

std::string comparison_json(const ComparisonReport& report, const GateResult& gate) {
  json outputs = json::object();
  for (const auto& [name, comparison] : report.outputs) outputs[name] = output_json(comparison);
  for (const auto& [name, mismatch] : report.shape_mismatches) outputs[name] = mismatch_json(mismatch);

  json violations = json::array();
  for (const Violation& v : gate.violations) {
    violations.push_back({{"output", v.output},
                          {"limit", v.limit},
                          {"value", optional_number(v.value)},
                          {"threshold", optional_number(v.threshold)},
                          {"message", v.message}});
  }

  json root;
  root["outputs"] = std::move(outputs);
  root["missing_outputs"] = report.missing_outputs;
  root["extra_outputs"] = report.extra_outputs;
  root["passed"] = gate.passed;
  root["violations"] = std::move(violations);
  // Names come from files; invalid UTF-8 is replaced rather than failing the whole report.
  return root.dump(2, ' ', false, json::error_handler_t::replace);
}

}  // namespace tensoracle
