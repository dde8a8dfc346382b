// The JSON form of a plugin declaration (docs/bundles.md, "Plugin declarations").
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>

#include "core/errors.h"
#include "io/strict_json.h"
#include "tensoracle/plugin.h"

namespace tensoracle {
namespace {

using Json = nlohmann::ordered_json;  // keeps keys in the documented order when writing

// A string member, or "" when absent and not `required`.
Result<std::string> get_string(const JsonField& object, const char* key, bool required) {
  TO_ASSIGN_OR_RETURN(const std::optional<JsonField> field, object.optional_member(key));
  if (!field) {
    if (required) return object.error("missing field '{}'", key);
    return std::string();
  }
  return field->as_string();
}

Result<TypeFormat> get_type_format(const JsonField& object) {
  TypeFormat out;
  for (const char* key : {"type", "format"}) {
    TO_ASSIGN_OR_RETURN(const std::optional<JsonField> field, object.optional_member(key));
    if (!field) continue;
    TO_ASSIGN_OR_RETURN(const std::string text, field->as_string());
    if (std::string_view(key) == "type") {
      auto parsed = parse_data_type(text);
      if (!parsed) return field->error("{}", parsed.status().message());
      out.type = *parsed;
    } else {
      auto parsed = parse_tensor_format(text);
      if (!parsed) return field->error("{}", parsed.status().message());
      out.format = *parsed;
    }
  }
  return out;
}

Result<PluginInput> parse_input(const JsonField& json) {
  TO_RETURN_IF_ERROR(json.allow_keys({"name", "allowed"}));
  PluginInput input;
  TO_ASSIGN_OR_RETURN(input.name, json.get_name("name"));
  TO_ASSIGN_OR_RETURN(const std::optional<JsonField> allowed, json.optional_member("allowed"));
  if (allowed) {
    TO_ASSIGN_OR_RETURN(const size_t count, allowed->array_size());
    input.allowed.clear();
    for (size_t i = 0; i < count; ++i) {
      const JsonField item = allowed->element(i);
      TO_RETURN_IF_ERROR(item.allow_keys({"type", "format"}));
      TO_ASSIGN_OR_RETURN(TypeFormat type_format, get_type_format(item));
      input.allowed.push_back(type_format);
    }
  }
  return input;
}

Result<OutputShapeRule> parse_shape_rule(const JsonField& json) {
  if (json.json().is_string() && json.json().get<std::string>() == "computed") return OutputShapeRule::computed();
  if (json.json().is_object()) {
    TO_RETURN_IF_ERROR(json.allow_keys({"copy_input"}));
    const auto it = json.json().find("copy_input");
    if (it != json.json().end() && it->is_number_integer()) {
      TO_ASSIGN_OR_RETURN(const int64_t index, json.get_int("copy_input", 0, 1'000'000));
      return OutputShapeRule::copy_input(static_cast<int>(index));
    }
  }
  return json.error("expected \"computed\" or {{\"copy_input\": <input index>}}, got {}", json.shown());
}

Result<PluginOutput> parse_output(const JsonField& json) {
  TO_RETURN_IF_ERROR(json.allow_keys({"name", "type", "format", "shape"}));
  PluginOutput output;
  TO_ASSIGN_OR_RETURN(output.name, json.get_name("name"));
  TO_ASSIGN_OR_RETURN(output.type_format, get_type_format(json));
  TO_ASSIGN_OR_RETURN(const std::optional<JsonField> shape, json.optional_member("shape"));
  if (shape) {
      TO_ASSIGN_OR_RETURN(output.shape, parse_shape_rule(*shape));
    }
  return output;
}

// The strings of the array member `key`, if present.
Result<std::vector<std::string>> get_strings(const JsonField& json, const char* key) {
  std::vector<std::string> out;
  TO_ASSIGN_OR_RETURN(const std::optional<JsonField> array, json.optional_member(key));
  if (!array) return out;
  TO_ASSIGN_OR_RETURN(const size_t count, array->array_size());
  for (size_t i = 0; i < count; ++i) {
    TO_ASSIGN_OR_RETURN(std::string item, array->element(i).as_name());
    out.push_back(std::move(item));
  }
  return out;
}

Result<PluginDeclaration> parse_declaration(const JsonField& json) {
  TO_RETURN_IF_ERROR(json.allow_keys({"name", "version", "namespace", "inputs", "outputs", "kernels", "architectures"}));
  PluginDeclaration declaration;
  TO_ASSIGN_OR_RETURN(declaration.identity.name, get_string(json, "name", true));
  TO_ASSIGN_OR_RETURN(declaration.identity.version, get_string(json, "version", true));
  TO_ASSIGN_OR_RETURN(declaration.identity.plugin_namespace, get_string(json, "namespace", false));
  TO_ASSIGN_OR_RETURN(const std::optional<JsonField> inputs, json.optional_member("inputs"));
  if (inputs) {
    TO_ASSIGN_OR_RETURN(const size_t count, inputs->array_size());
    for (size_t i = 0; i < count; ++i) {
      TO_ASSIGN_OR_RETURN(PluginInput input, parse_input(inputs->element(i)));
      declaration.io.inputs.push_back(std::move(input));
    }
  }
  TO_ASSIGN_OR_RETURN(const std::optional<JsonField> outputs, json.optional_member("outputs"));
  if (outputs) {
    TO_ASSIGN_OR_RETURN(const size_t count, outputs->array_size());
    for (size_t i = 0; i < count; ++i) {
      TO_ASSIGN_OR_RETURN(PluginOutput output, parse_output(outputs->element(i)));
      declaration.io.outputs.push_back(std::move(output));
    }
  }
  TO_ASSIGN_OR_RETURN(declaration.bundle.kernels, get_strings(json, "kernels"));
  TO_ASSIGN_OR_RETURN(const std::optional<JsonField> architectures, json.optional_member("architectures"));
  if (architectures) {
    TO_ASSIGN_OR_RETURN(const size_t count, architectures->array_size());
    for (size_t i = 0; i < count; ++i) {
      TO_ASSIGN_OR_RETURN(const std::string name, architectures->element(i).as_string());
      auto arch = parse_gpu_arch(name);
      if (!arch) return architectures->element(i).error("{}", arch.status().message());
      declaration.bundle.architectures.push_back(*arch);
    }
  }
  TO_RETURN_IF_ERROR(validate_plugin_declaration(declaration).with_context(json.source()));
  return declaration;
}

Result<PluginDeclaration> parse_declaration_text(std::string_view json_text, const std::string& source) {
  TO_ASSIGN_OR_RETURN(const nlohmann::json doc,
                      parse_strict_json(json_text, source, kMaxJsonDepth, StatusCode::kInvalidArgument));
  return parse_declaration(JsonField(doc, source, StatusCode::kInvalidArgument));
}

Json type_format_json(const TypeFormat& type_format) {
  return Json{{"type", std::string(data_type_name(type_format.type))},
              {"format", std::string(tensor_format_name(type_format.format))}};
}

}  // namespace

Result<PluginDeclaration> plugin_declaration_from_json(std::string_view json_text) {
  return parse_declaration_text(json_text, "plugin declaration");
}

std::string plugin_declaration_to_json(const PluginDeclaration& declaration) {
  Json json;
  json["name"] = declaration.identity.name;
  json["version"] = declaration.identity.version;
  if (!declaration.identity.plugin_namespace.empty()) json["namespace"] = declaration.identity.plugin_namespace;
  json["inputs"] = Json::array();
  for (const PluginInput& input : declaration.io.inputs) {
    Json allowed = Json::array();
    for (const TypeFormat& type_format : input.allowed) allowed.push_back(type_format_json(type_format));
    json["inputs"].push_back(Json{{"name", input.name}, {"allowed", allowed}});
  }
  json["outputs"] = Json::array();
  for (const PluginOutput& output : declaration.io.outputs) {
    Json item = type_format_json(output.type_format);
    item["name"] = output.name;
    item["shape"] = output.shape.kind == OutputShapeRule::Kind::kComputed
                        ? Json("computed")
                        : Json{{"copy_input", output.shape.input_index}};
    json["outputs"].push_back(std::move(item));
  }
  json["kernels"] = declaration.bundle.kernels;
  json["architectures"] = Json::array();
  for (const GpuArch& arch : declaration.bundle.architectures) json["architectures"].push_back(arch.name());
  return json.dump(2) + "\n";
}

Result<PluginDeclaration> read_plugin_declaration(const std::string& path) {
  TO_ASSIGN_OR_RETURN(const nlohmann::json doc,
                      read_strict_json_file(path, "plugin declaration", StatusCode::kInvalidArgument));
  return parse_declaration(JsonField(doc, path, StatusCode::kInvalidArgument));
}

}  // namespace tensoracle
