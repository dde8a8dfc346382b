// Limits: the JSON limits format and the options that compute what the limits check.
#include <set>

#include "core/errors.h"
#include "io/strict_json.h"
#include "tensoracle/compare.h"

namespace tensoracle {
namespace {

// The limits file is written by hand: errors are kInvalidArgument and read
// "<source>: <JSON pointer>: <what>" (json_field.h).
class LimitsParser {
 public:
  Result<Limits> parse(const JsonField& root) const {
    if (!root.json().is_object()) return root.error("the limits must be a JSON object, got {}", root.shown());
    TO_RETURN_IF_ERROR(root.allow_keys({"default", "outputs", "allow_missing_outputs", "allow_extra_outputs"}));
    Limits limits;
    TO_RETURN_IF_ERROR(read_bool(root, "allow_missing_outputs", limits.allow_missing_outputs));
    TO_RETURN_IF_ERROR(read_bool(root, "allow_extra_outputs", limits.allow_extra_outputs));
    TO_ASSIGN_OR_RETURN(const std::optional<JsonField> defaults, root.optional_member("default"));
    if (defaults) TO_RETURN_IF_ERROR(apply_block(*defaults, limits.defaults));
    TO_ASSIGN_OR_RETURN(const std::optional<JsonField> outputs, root.optional_member("outputs"));
    if (outputs) {
      if (!outputs->json().is_object()) return outputs->error("expected an object of output names, got {}", outputs->shown());
      for (const auto& item : outputs->json().items()) {
        TO_ASSIGN_OR_RETURN(const JsonField block, outputs->member(item.key()));
        OutputLimits output = limits.defaults;
        TO_RETURN_IF_ERROR(apply_block(block, output));
        limits.outputs.emplace(item.key(), std::move(output));
      }
    }
    return limits;
  }

 private:
  static Status read_bool(const JsonField& object, const char* key, bool& out) {
    TO_ASSIGN_OR_RETURN(const std::optional<JsonField> field, object.optional_member(key));
    if (!field) return Status::ok();
    TO_ASSIGN_OR_RETURN(out, field->as_bool());
    return Status::ok();
  }

  // A number (within [minimum, maximum] when given) or null (no threshold).
  static Status read_threshold(const JsonField& object, const char* key, std::optional<double>& out,
                               std::optional<double> minimum, std::optional<double> maximum = std::nullopt) {
    TO_ASSIGN_OR_RETURN(const std::optional<JsonField> field, object.optional_member(key));
    if (!field) return Status::ok();
    if (field->is_null()) {
      out.reset();
      return Status::ok();
    }
    const double value = field->json().is_number() ? field->json().get<double>() : 0.0;
    if (!field->json().is_number() || (minimum && value < *minimum) || (maximum && value > *maximum)) {
      return field->error("expected null or a number in [{}, {}], got {}",
                          minimum ? fmt::format("{}", *minimum) : "-inf", maximum ? fmt::format("{}", *maximum) : "inf",
                          field->shown());
    }
    out = value;
    return Status::ok();
  }

  static Status read_count(const JsonField& object, const char* key, std::optional<int64_t>& out) {
    TO_ASSIGN_OR_RETURN(const std::optional<JsonField> field, object.optional_member(key));
    if (!field) return Status::ok();
    if (field->is_null()) {
      out.reset();
      return Status::ok();
    }
    TO_ASSIGN_OR_RETURN(out, field->as_int(0));
    return Status::ok();
  }

  static Status read_tolerance(const JsonField& block, std::optional<Tolerance>& out) {
    TO_ASSIGN_OR_RETURN(const std::optional<JsonField> atol, block.optional_member("atol"));
    TO_ASSIGN_OR_RETURN(const std::optional<JsonField> rtol, block.optional_member("rtol"));
    if (!atol && !rtol) return Status::ok();
    if (!out && atol.has_value() != rtol.has_value()) {
      return block.error("'{}' needs '{}' too (no inherited tolerance to complete it)", atol ? "atol" : "rtol",
                         atol ? "rtol" : "atol");
    }
    Tolerance tolerance = out.value_or(Tolerance{});
    if (atol) {
      TO_ASSIGN_OR_RETURN(tolerance.atol, atol->as_number(0.0));
    }
    if (rtol) {
      TO_ASSIGN_OR_RETURN(tolerance.rtol, rtol->as_number(0.0));
    }
    out = tolerance;
    return Status::ok();
  }

  static Status apply_metrics(const JsonField& metrics, std::map<std::string, MetricBounds>& out) {
    if (!metrics.json().is_object()) return metrics.error("expected an object of metric names, got {}", metrics.shown());
    for (const auto& item : metrics.json().items()) {
      TO_ASSIGN_OR_RETURN(const JsonField bounds_json, metrics.member(item.key()));
      if (bounds_json.is_null()) {
        out.erase(item.key());
        continue;
      }
      if (!bounds_json.json().is_object())
        return bounds_json.error("expected {{\"min\": x, \"max\": y}} or null, got {}", bounds_json.shown());
      TO_RETURN_IF_ERROR(bounds_json.allow_keys({"min", "max"}));
      MetricBounds& bounds = out[item.key()];
      TO_RETURN_IF_ERROR(read_threshold(bounds_json, "min", bounds.min, std::nullopt));
      TO_RETURN_IF_ERROR(read_threshold(bounds_json, "max", bounds.max, std::nullopt));
      if (bounds.min && bounds.max && *bounds.min > *bounds.max)
        return bounds_json.error("min {} is above max {}", *bounds.min, *bounds.max);
    }
    return Status::ok();
  }

  static Status apply_block(const JsonField& block, OutputLimits& out) {
    if (!block.json().is_object()) return block.error("expected an object of limits, got {}", block.shown());
    TO_RETURN_IF_ERROR(block.allow_keys({"atol", "rtol", "max_abs_error", "max_rel_l2_error", "min_cosine_similarity",
                                         "max_outside_tolerance_count", "max_outside_tolerance_fraction",
                                         "allow_non_finite", "metrics"}));
    TO_RETURN_IF_ERROR(read_tolerance(block, out.tolerance));
    TO_RETURN_IF_ERROR(read_threshold(block, "max_abs_error", out.max_abs_error, 0.0));
    TO_RETURN_IF_ERROR(read_threshold(block, "max_rel_l2_error", out.max_rel_l2_error, 0.0));
    TO_RETURN_IF_ERROR(read_threshold(block, "min_cosine_similarity", out.min_cosine_similarity, -1.0, 1.0));
    TO_RETURN_IF_ERROR(read_count(block, "max_outside_tolerance_count", out.max_outside_tolerance_count));
    TO_RETURN_IF_ERROR(
        read_threshold(block, "max_outside_tolerance_fraction", out.max_outside_tolerance_fraction, 0.0, 1.0));
    TO_RETURN_IF_ERROR(read_bool(block, "allow_non_finite", out.allow_non_finite));
    TO_ASSIGN_OR_RETURN(const std::optional<JsonField> metrics, block.optional_member("metrics"));
    if (metrics) TO_RETURN_IF_ERROR(apply_metrics(*metrics, out.metrics));
    return Status::ok();
  }
};

}  // namespace

const OutputLimits& Limits::for_output(const std::string& name) const {
  const auto it = outputs.find(name);
  return it == outputs.end() ? defaults : it->second;
}

Result<Limits> parse_limits(const std::string& json_text, const std::string& source) {
  TO_ASSIGN_OR_RETURN(const nlohmann::json root,
                      parse_strict_json(json_text, source, kMaxJsonDepth, StatusCode::kInvalidArgument));
  return LimitsParser().parse(JsonField(root, source, StatusCode::kInvalidArgument));
}

Result<Limits> read_limits_file(const std::string& path) {
  TO_ASSIGN_OR_RETURN(const nlohmann::json root, read_strict_json_file(path, "limits file", StatusCode::kInvalidArgument));
  return LimitsParser().parse(JsonField(root, path, StatusCode::kInvalidArgument));
}

CompareOptions compare_options_for(const Limits& limits, CompareOptions base) {
  if (limits.defaults.tolerance) base.tolerance = limits.defaults.tolerance;
  std::set<std::string> metrics(base.metrics.begin(), base.metrics.end());
  for (const auto& entry : limits.defaults.metrics) metrics.insert(entry.first);
  for (const auto& [name, output] : limits.outputs) {
    if (output.tolerance) base.output_tolerance[name] = *output.tolerance;
    for (const auto& entry : output.metrics) metrics.insert(entry.first);
  }
  base.metrics.assign(metrics.begin(), metrics.end());
  return base;
}

}  // namespace tensoracle
