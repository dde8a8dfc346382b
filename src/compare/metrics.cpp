// The registry of extra (model-specific) metrics and the built-in ones.
#include <cmath>
#include <limits>

#include "core/errors.h"
#include "tensoracle/compare.h"

namespace tensoracle {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool is_metric_name(const std::string& name) {
  if (name.empty()) return false;
  for (char ch : name) {
    if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_')) return false;
  }
  return true;
}

double mean_squared_error(const OutputComparison& s) {
  if (s.finite_pair_count == 0) return 0.0;
  return s.l2_error * s.l2_error / static_cast<double>(s.finite_pair_count);
}

// Both from the norms rather than from squares, so they stay finite for any representable data.
Result<double> psnr(const MetricInput& in) {
  const OutputComparison& s = in.summary;
  if (s.l2_error == 0.0) return kInf;
  if (s.max_abs_reference == 0.0) return -kInf;
  // 10*log10(peak^2 / (||c-r||^2 / n)) = 20*(log10(peak) - log10(||c-r||) + log10(n)/2)
  return 20.0 * (std::log10(s.max_abs_reference) - std::log10(s.l2_error) +
                 0.5 * std::log10(static_cast<double>(s.finite_pair_count)));
}

Result<double> snr(const MetricInput& in) {
  const OutputComparison& s = in.summary;
  if (s.l2_error == 0.0) return kInf;
  if (s.l2_reference == 0.0) return -kInf;
  // 10*log10(||r||^2 / ||c-r||^2); the ratio of norms, which rel_l2_error keeps exact, is safer
  // than the quotient of two possibly overflowing norms.
  return -20.0 * std::log10(s.rel_l2_error);
}

Result<double> mse(const MetricInput& in) { return mean_squared_error(in.summary); }

MetricRegistry make_builtin_metrics() {
  MetricRegistry registry;
  const MetricDefinition builtins[] = {
      {"psnr", "peak signal-to-noise ratio in dB, peak = max |reference|", psnr},
      {"snr", "signal-to-noise ratio in dB, 10*log10(sum r^2 / sum (c-r)^2)", snr},
      {"mse", "mean squared error over finite pairs", mse},
  };
  for (const MetricDefinition& metric : builtins) {
    // The built-in names are valid and distinct; add cannot fail.
    (void)registry.add(metric);
  }
  return registry;
}

}  // namespace

Status MetricRegistry::add(MetricDefinition definition) {
  if (!is_metric_name(definition.name))
    return invalid_argument("metric name '{}' must be non-empty lower-case [a-z0-9_]", definition.name);
  if (!definition.compute) return invalid_argument("metric '{}' has no compute function", definition.name);
  if (metrics_.count(definition.name) != 0) return invalid_argument("metric '{}' is already registered", definition.name);
  std::string name = definition.name;
  metrics_.emplace(std::move(name), std::move(definition));
  return Status::ok();
}

const MetricDefinition* MetricRegistry::find(const std::string& name) const {
  const auto it = metrics_.find(name);
  return it == metrics_.end() ? nullptr : &it->second;
}

std::vector<std::string> MetricRegistry::names() const {
  std::vector<std::string> result;
  for (const auto& entry : metrics_) result.push_back(entry.first);
  return result;
}

const MetricRegistry& builtin_metrics() {
  static const MetricRegistry registry = make_builtin_metrics();
  return registry;
}

}  // namespace tensoracle
