// Format negotiation (format_negotiation.h).
#include "plugin/format_negotiation.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/errors.h"
#include "plugin/plugin_call.h"

namespace tensoracle::plugin {

namespace {

bool is_convertible_float(DataType type) {
  return type == DataType::kFloat32 || type == DataType::kFloat16 || type == DataType::kBFloat16;
}

std::vector<TensorFormat> provided_formats(const ProvidedInput& provided) {
  return provided.formats.empty() ? std::vector<TensorFormat>{TensorFormat::kLinear} : provided.formats;
}

// 0: as is; 1: a reformat; 2: a cast; 3: a cast and a reformat.
int conversion_rank(const ProvidedInput& provided, const TypeFormat& candidate) {
  const std::vector<TensorFormat> formats = provided_formats(provided);
  const bool format_free = std::find(formats.begin(), formats.end(), candidate.format) != formats.end();
  if (candidate.type == provided.type) return format_free ? 0 : 1;
  return format_free ? 2 : 3;
}

}  // namespace

bool plugin_type_converts(DataType from, DataType to) {
  return from == to || (is_convertible_float(from) && is_convertible_float(to));
}

bool provided_as_is(const ProvidedInput& provided, const TypeFormat& chosen) { return conversion_rank(provided, chosen) == 0; }

std::string type_format_list(const std::vector<TypeFormat>& formats) {
  std::vector<std::string> names;
  for (const TypeFormat& f : formats) names.push_back(type_format_name(f));
  return fmt::format("{}", fmt::join(names, ", "));
}

Result<std::vector<TypeFormat>> negotiate_plugin_inputs(const Plugin& plugin, const std::string& who, const PluginIO& io,
                                                        const std::vector<ProvidedInput>& provided) {
  TO_ASSERT(io.inputs.size() == provided.size());
  std::vector<TypeFormat> chosen;
  for (size_t i = 0; i < provided.size(); ++i) {
    const PluginInput& input = io.inputs[i];
    const ProvidedInput& from = provided[i];
    std::vector<size_t> order(input.allowed.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return conversion_rank(from, input.allowed[a]) < conversion_rank(from, input.allowed[b]);
    });
    std::vector<std::string> passed_over;
    bool found = false;
    for (size_t k : order) {
      const TypeFormat& candidate = input.allowed[k];
      if (!plugin_type_converts(from.type, candidate.type)) {
        passed_over.push_back(fmt::format("{} (types convert only among fp32, fp16 and bf16)", type_format_name(candidate)));
        continue;
      }
      const Status applies = check_format_applies(candidate, from.shape);
      if (!applies.is_ok()) {
        passed_over.push_back(fmt::format("{} ({})", type_format_name(candidate), applies.message()));
        continue;
      }
      TO_ASSIGN_OR_RETURN(const bool supported, call_plugin(who, "supports", [&]() {
                            return Result<bool>(plugin.supports(static_cast<int>(i), candidate, chosen));
                          }));
      if (!supported) {
        passed_over.push_back(chosen.empty() ? fmt::format("{} (supports() refuses it)", type_format_name(candidate))
                                             : fmt::format("{} (supports() refuses it after {})", type_format_name(candidate),
                                                           type_format_list(chosen)));
        continue;
      }
      chosen.push_back(candidate);
      found = true;
      break;
    }
    if (!found)
      return invalid_argument(
          "plugin '{}' input {} '{}' ({}{}, written {}): no combination it allows can be served; it allows {}", who, i,
          input.name, data_type_name(from.type), from.shape.to_string(),
          fmt::join([&] {
            std::vector<std::string> names;
            for (TensorFormat f : provided_formats(from)) names.emplace_back(tensor_format_name(f));
            return names;
          }(), " or "),
          fmt::join(passed_over, ", "));
  }
  return chosen;
}

}  // namespace tensoracle::plugin
