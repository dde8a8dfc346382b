#include "workflow/measures.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/errors.h"

namespace tensoracle::workflow {

Result<MetricRegistry> measure_registry(const std::vector<MeasureSpec>& measures, const std::string& scratch_directory) {
  MetricRegistry registry = builtin_metrics();
  for (const MeasureSpec& m : measures) {
    if (const MetricDefinition* builtin = registry.find(m.name)) {
      if (m.kind == m.name) continue;  // "psnr" measured as psnr: the built-in itself
      return invalid_argument("{}: measure '{}' is named like the built-in metric '{}' ({}); choose another name", m.where,
                              m.name, builtin->name, builtin->description);
    }
    MetricDefinition d;
    d.name = m.name;
    if (m.kind == "psnr" || m.kind == "snr") {
      const MetricDefinition* builtin = builtin_metrics().find(m.kind);
      TO_ASSERT(builtin != nullptr);
      d.description = builtin->description;
      d.compute = builtin->compute;
    } else if (m.kind == "topk_agreement") {
      d.description = fmt::format("top-{} agreement: the fraction of rows with the same {} largest positions", m.k, m.k);
      d.compute = [k = m.k](const MetricInput& in) { return topk_agreement(in.candidate, in.reference, k); };
    } else {
      d.description = "external measure: " + fmt::format("{}", fmt::join(m.command, " "));
      d.compute = [m, scratch_directory](const MetricInput& in) {
        return run_external_measure(m, in.candidate, in.reference, scratch_directory);
      };
    }
    TO_RETURN_IF_ERROR(registry.add(std::move(d)));
  }
  return registry;
}

Result<Limits> limits_with_measures(Limits limits, const std::vector<MeasureSpec>& measures,
                                    const std::vector<std::string>& outputs) {
  for (const MeasureSpec& m : measures) {
    const std::vector<std::string>& targets = m.outputs.empty() ? outputs : m.outputs;
    for (const std::string& o : targets) {
      if (std::find(outputs.begin(), outputs.end(), o) == outputs.end())
        return invalid_argument("{}: measure '{}' names output '{}', which the reference does not hold (it holds: {})",
                                m.where, m.name, o, fmt::join(outputs, ", "));
      auto it = limits.outputs.find(o);
      if (it == limits.outputs.end()) it = limits.outputs.emplace(o, limits.defaults).first;
      it->second.metrics[m.name] = MetricBounds{m.min, m.max};
    }
  }
  return limits;
}

}  // namespace tensoracle::workflow
