// Limits: the JSON limits format and the options that compute what the limits check.
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "tensoracle/compare.h"

namespace tensoracle {
namespace {

using nlohmann::json;

// Reports errors as "<source>: <path>: <what>".
class LimitsParser {
 public:
  explicit LimitsParser(std::string source) : source_(std::move(source)) {}

  Result<Limits> parse(const json& root) {
    if (!root.is_object()) return error("", "the limits must be a JSON object, got {}", root.type_name());
    TO_RETURN_IF_ERROR(check_keys(root, "", {"default", "outputs", "allow_missing_outputs", "allow_extra_outputs"}));
    Limits limits;
    TO_RETURN_IF_ERROR(read_bool(root, "allow_missing_outputs", "", limits.allow_missing_outputs));
    TO_RETURN_IF_ERROR(read_bool(root, "allow_extra_outputs", "", limits.allow_extra_outputs));
    if (const auto it = root.find("default"); it != root.end()) {
      TO_RETURN_IF_ERROR(apply_block(*it, "default", limits.defaults));
    }
    if (const auto it = root.find("outputs"); it != root.end()) {
      if (!it->is_object()) return error("outputs", "expected an object of output names, got {}", it->type_name());
      for (const auto& [name, block] : it->items()) {
        OutputLimits output = limits.defaults;
        TO_RETURN_IF_ERROR(apply_block(block, "outputs." + name, output));
        limits.outputs.emplace(name, std::move(output));
      }
    }
    return limits;
  }

 private:
  template <typename... Args>
  Status error(const std::string& path, fmt::format_string<Args...> format, Args&&... args) const {
    const std::string what = fmt::format(format, std::forward<Args>(args)...);
    return invalid_argument("{}: {}{}", source_, path.empty() ? "" : path + ": ", what);
  }

  Status check_keys(const json& object, const std::string& path, const std::set<std::string>& known) const {
    for (const auto& item : object.items()) {
      if (known.count(item.key()) != 0) continue;
      std::string list;
      for (const std::string& key : known) list += (list.empty() ? "" : ", ") + key;
      return error(path, "unknown key '{}' (known keys: {})", item.key(), list);
    }
    return Status::ok();
  }

  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  Status read_bool(const json& object, const char* key, const std::string& path, bool& out) const {
    const auto it = object.find(key);
    if (it == object.end()) return Status::ok();
    if (!it->is_boolean()) return error(join(path, key), "expected true or false, got {}", it->dump());
    out = it->get<bool>();
    return Status::ok();
  }

  // A number (>= `minimum` when given) or null (no threshold).
  Status read_threshold(const json& object, const char* key, const std::string& path, std::optional<double>& out,
                        std::optional<double> minimum, std::optional<double> maximum = std::nullopt) const {
    const auto it = object.find(key);
    if (it == object.end()) return Status::ok();
    if (it->is_null()) {
      out.reset();
      return Status::ok();
    }
    const double value = it->is_number() ? it->get<double>() : 0.0;
    if (!it->is_number() || (minimum && value < *minimum) || (maximum && value > *maximum)) {
      return error(join(path, key), "expected null or a number in [{}, {}], got {}",
                   minimum ? fmt::format("{}", *minimum) : "-inf", maximum ? fmt::format("{}", *maximum) : "inf",
                   it->dump());
    }
    out = value;
    return Status::ok();
  }

  Status read_count(const json& object, const char* key, const std::string& path, std::optional<int64_t>& out) const {
    const auto it = object.find(key);
    if (it == object.end()) return Status::ok();
    if (it->is_null()) {
      out.reset();
      return Status::ok();
    }
    if (!it->is_number_integer() || (it->is_number_integer() && !it->is_number_unsigned() && it->get<int64_t>() < 0))
      return error(join(path, key), "expected null or an integer >= 0, got {}", it->dump());
    if (it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      return error(join(path, key), "{} is too large", it->dump());
    out = it->get<int64_t>();
    return Status::ok();
  }

  Status read_tolerance(const json& block, const std::string& path, std::optional<Tolerance>& out) const {
    const bool has_atol = block.contains("atol");
    const bool has_rtol = block.contains("rtol");
    if (!has_atol && !has_rtol) return Status::ok();
    if (!out && has_atol != has_rtol) {
      return error(path, "'{}' needs '{}' too (no inherited tolerance to complete it)", has_atol ? "atol" : "rtol",
                   has_atol ? "rtol" : "atol");
    }
    Tolerance tolerance = out.value_or(Tolerance{});
    for (const char* key : {"atol", "rtol"}) {
      const auto it = block.find(key);
      if (it == block.end()) continue;
      if (!it->is_number() || it->get<double>() < 0)
        return error(join(path, key), "expected a number >= 0, got {}", it->dump());
      (std::string(key) == "atol" ? tolerance.atol : tolerance.rtol) = it->get<double>();
    }
    out = tolerance;
    return Status::ok();
  }

  Status apply_metrics(const json& metrics, const std::string& path, std::map<std::string, MetricBounds>& out) const {
    if (!metrics.is_object()) return error(path, "expected an object of metric names, got {}", metrics.type_name());
    for (const auto& [name, bounds_json] : metrics.items()) {
      const std::string metric_path = join(path, name);
      if (bounds_json.is_null()) {
        out.erase(name);
        continue;
      }
      if (!bounds_json.is_object())
        return error(metric_path, "expected {{\"min\": x, \"max\": y}} or null, got {}", bounds_json.dump());
      TO_RETURN_IF_ERROR(check_keys(bounds_json, metric_path, {"min", "max"}));
      MetricBounds& bounds = out[name];
      TO_RETURN_IF_ERROR(read_threshold(bounds_json, "min", metric_path, bounds.min, std::nullopt));
      TO_RETURN_IF_ERROR(read_threshold(bounds_json, "max", metric_path, bounds.max, std::nullopt));
      if (bounds.min && bounds.max && *bounds.min > *bounds.max)
        return error(metric_path, "min {} is above max {}", *bounds.min, *bounds.max);
    }
    return Status::ok();
  }

  Status apply_block(const json& block, const std::string& path, OutputLimits& out) const {
    if (!block.is_object()) return error(path, "expected an object of limits, got {}", block.type_name());
    TO_RETURN_IF_ERROR(check_keys(block, path,
                                  {"atol", "rtol", "max_abs_error", "max_rel_l2_error", "min_cosine_similarity",
                                   "max_outside_tolerance_count", "max_outside_tolerance_fraction",
                                   "allow_non_finite", "metrics"}));
    TO_RETURN_IF_ERROR(read_tolerance(block, path, out.tolerance));
    TO_RETURN_IF_ERROR(read_threshold(block, "max_abs_error", path, out.max_abs_error, 0.0));
    TO_RETURN_IF_ERROR(read_threshold(block, "max_rel_l2_error", path, out.max_rel_l2_error, 0.0));
    TO_RETURN_IF_ERROR(read_threshold(block, "min_cosine_similarity", path, out.min_cosine_similarity, -1.0, 1.0));
    TO_RETURN_IF_ERROR(read_count(block, "max_outside_tolerance_count", path, out.max_outside_tolerance_count));
    TO_RETURN_IF_ERROR(
        read_threshold(block, "max_outside_tolerance_fraction", path, out.max_outside_tolerance_fraction, 0.0, 1.0));
    TO_RETURN_IF_ERROR(read_bool(block, "allow_non_finite", path, out.allow_non_finite));
    if (const auto it = block.find("metrics"); it != block.end()) {
      TO_RETURN_IF_ERROR(apply_metrics(*it, join(path, "metrics"), out.metrics));
    }
    return Status::ok();
  }

  std::string source_;
};

}  // namespace

const OutputLimits& Limits::for_output(const std::string& name) const {
  const auto it = outputs.find(name);
  return it == outputs.end() ? defaults : it->second;
}

Result<Limits> parse_limits(const std::string& json_text, const std::string& source) {
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::parse_error& e) {
    return invalid_argument("{}: not valid JSON: {}", source, e.what());
  }
  return LimitsParser(source).parse(root);
}

Result<Limits> read_limits_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return not_found("cannot open limits file '{}'", path);
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) return io_error("cannot read limits file '{}'", path);
  return parse_limits(text.str(), path);
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
