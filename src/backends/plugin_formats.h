// The type/format combinations a plan records for a plugin layer (format_negotiation.h chose
// them), and their JSON form in the plans of every backend:
//   "formats": {"inputs": ["fp16/HWC8", "fp32/LINEAR"], "outputs": ["fp32/LINEAR"]}
// `tensoracle inspect` shows them per plugin layer.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "io/json_field.h"
#include "tensoracle/network.h"

namespace tensoracle::backends {

struct PluginFormats {
  std::vector<TypeFormat> inputs;
  std::vector<TypeFormat> outputs;

  bool operator==(const PluginFormats& other) const { return inputs == other.inputs && outputs == other.outputs; }
  bool operator!=(const PluginFormats& other) const { return !(*this == other); }
};

nlohmann::json plugin_formats_to_json(const PluginFormats& formats);

// Strict: both lists, type/format names only, one entry per input and output of the layer (its
// tensors' descriptions), the inputs' types convertible from their tensors' (plugin_type_converts),
// the outputs' types their tensors', each combination applicable to its tensor (check_format_applies).
Result<PluginFormats> plugin_formats_from_json(const JsonField& field, const std::vector<TensorDesc>& inputs,
                                              const std::vector<TensorDesc>& outputs);

// "input 0: fp16/HWC8, input 1: fp32/LINEAR; output 0: fp32/LINEAR".
std::string plugin_formats_text(const PluginFormats& formats);

}  // namespace tensoracle::backends
