// Recorded plugin formats (plugin_formats.h).
#include "backends/plugin_formats.h"

#include <fmt/format.h>

#include "core/errors.h"
#include "plugin/format_negotiation.h"

namespace tensoracle::backends {

namespace {

nlohmann::json names(const std::vector<TypeFormat>& formats) {
  nlohmann::json out = nlohmann::json::array();
  for (const TypeFormat& f : formats) out.push_back(type_format_name(f));
  return out;
}

Result<std::vector<TypeFormat>> read_list(const JsonField& formats, const char* key,
                                          const std::vector<TensorDesc>& tensors, bool is_input) {
  TO_ASSIGN_OR_RETURN(const JsonField list, formats.member(key));
  TO_ASSIGN_OR_RETURN(const size_t count, list.array_size());
  if (count != tensors.size()) return list.error("lists {} formats for {} {}", count, tensors.size(), key);
  std::vector<TypeFormat> out;
  for (size_t i = 0; i < count; ++i) {
    const JsonField entry = list.element(i);
    TO_ASSIGN_OR_RETURN(const std::string text, entry.as_string());
    auto parsed = parse_type_format(text);
    if (!parsed.is_ok() || type_format_name(*parsed) != text)
      return entry.error("expected a type/format such as \"fp16/HWC8\", got {}", entry.shown());
    const TensorDesc& desc = tensors[i];
    if (is_input ? !plugin::plugin_type_converts(desc.dtype, parsed->type) : parsed->type != desc.dtype)
      return entry.error("{} for {} {}, a {} tensor", text, is_input ? "input" : "output", i, data_type_name(desc.dtype));
    const Status applies = check_format_applies(*parsed, desc.shape);
    if (!applies.is_ok()) return entry.error("{}", applies.message());
    out.push_back(*parsed);
  }
  return out;
}

}  // namespace

nlohmann::json plugin_formats_to_json(const PluginFormats& formats) {
  return nlohmann::json{{"inputs", names(formats.inputs)}, {"outputs", names(formats.outputs)}};
}

Result<PluginFormats> plugin_formats_from_json(const JsonField& field, const std::vector<TensorDesc>& inputs,
                                              const std::vector<TensorDesc>& outputs) {
  TO_RETURN_IF_ERROR(field.allow_keys({"inputs", "outputs"}));
  PluginFormats out;
  TO_ASSIGN_OR_RETURN(out.inputs, read_list(field, "inputs", inputs, true));
  TO_ASSIGN_OR_RETURN(out.outputs, read_list(field, "outputs", outputs, false));
  return out;
}

std::string plugin_formats_text(const PluginFormats& formats) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < formats.inputs.size(); ++i) parts.push_back(fmt::format("input {}: {}", i, type_format_name(formats.inputs[i])));
  std::string text = fmt::format("{}", fmt::join(parts, ", "));
  parts.clear();
  for (size_t o = 0; o < formats.outputs.size(); ++o)
    parts.push_back(fmt::format("output {}: {}", o, type_format_name(formats.outputs[o])));
  return text + "; " + fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace tensoracle::backends
