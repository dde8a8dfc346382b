// The JSON form of a plugin declaration (docs/bundles.md, "Plugin declarations").
#include <fstream>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "core/errors.h"
#include "tensoracle/plugin.h"

namespace tensoracle {
namespace {

using Json = nlohmann::ordered_json;  // keeps keys in the documented order when writing

// Rejects keys outside `known` so that a typo ("archs") is an error, not a silently ignored field.
Status check_keys(const Json& object, const std::string& path, std::initializer_list<const char*> known) {
  if (!object.is_object()) return invalid_argument("{}: expected a JSON object", path);
  for (const auto& item : object.items()) {
    bool found = false;
    for (const char* key : known) found = found || item.key() == key;
    if (!found) return invalid_argument("{}: unknown key '{}'", path, item.key());
  }
  return Status::ok();
}

Result<std::string> get_string(const Json& object, const std::string& path, const char* key, bool required) {
  const auto it = object.find(key);
  if (it == object.end()) {
    if (required) return invalid_argument("{}: missing key '{}'", path, key);
    return std::string();
  }
  if (!it->is_string()) return invalid_argument("{}.{}: expected a string", path, key);
  return it->get<std::string>();
}

Result<TypeFormat> get_type_format(const Json& object, const std::string& path) {
  TypeFormat out;
  TO_ASSIGN_OR_RETURN(std::string type, get_string(object, path, "type", false));
  TO_ASSIGN_OR_RETURN(std::string format, get_string(object, path, "format", false));
  if (!type.empty()) {
    auto parsed = parse_data_type(type);
    if (!parsed) return parsed.status().with_context(path + ".type");
    out.type = *parsed;
  }
  if (!format.empty()) {
    auto parsed = parse_tensor_format(format);
    if (!parsed) return parsed.status().with_context(path + ".format");
    out.format = *parsed;
  }
  return out;
}

const Json* get_array(const Json& object, const std::string& path, const char* key, Status* error) {
  const auto it = object.find(key);
  if (it == object.end()) return nullptr;
  if (!it->is_array()) *error = invalid_argument("{}.{}: expected an array", path, key);
  return &*it;
}

Result<PluginInput> parse_input(const Json& json, const std::string& path) {
  TO_RETURN_IF_ERROR(check_keys(json, path, {"name", "allowed"}));
  PluginInput input;
  TO_ASSIGN_OR_RETURN(input.name, get_string(json, path, "name", true));
  Status error;
  if (const Json* allowed = get_array(json, path, "allowed", &error)) {
    TO_RETURN_IF_ERROR(error);
    input.allowed.clear();
    for (size_t i = 0; i < allowed->size(); ++i) {
      const std::string item_path = fmt::format("{}.allowed[{}]", path, i);
      TO_RETURN_IF_ERROR(check_keys((*allowed)[i], item_path, {"type", "format"}));
      TO_ASSIGN_OR_RETURN(TypeFormat type_format, get_type_format((*allowed)[i], item_path));
      input.allowed.push_back(type_format);
    }
  }
  return input;
}

Result<OutputShapeRule> parse_shape_rule(const Json& json, const std::string& path) {
  if (json.is_string() && json.get<std::string>() == "computed") return OutputShapeRule::computed();
  if (json.is_object()) {
    TO_RETURN_IF_ERROR(check_keys(json, path, {"copy_input"}));
    const auto it = json.find("copy_input");
    if (it != json.end() && it->is_number_integer()) {
      const auto index = it->get<int64_t>();
      if (index < 0 || index > 1'000'000) return invalid_argument("{}.copy_input: {} is not an input index", path, index);
      return OutputShapeRule::copy_input(static_cast<int>(index));
    }
  }
  return invalid_argument("{}: expected \"computed\" or {{\"copy_input\": <input index>}}", path);
}

Result<PluginOutput> parse_output(const Json& json, const std::string& path) {
  TO_RETURN_IF_ERROR(check_keys(json, path, {"name", "type", "format", "shape"}));
  PluginOutput output;
  TO_ASSIGN_OR_RETURN(output.name, get_string(json, path, "name", true));
  TO_ASSIGN_OR_RETURN(output.type_format, get_type_format(json, path));
  if (const auto it = json.find("shape"); it != json.end()) {
    TO_ASSIGN_OR_RETURN(output.shape, parse_shape_rule(*it, path + ".shape"));
  }
  return output;
}

Result<PluginDeclaration> parse_declaration(const Json& json) {
  TO_RETURN_IF_ERROR(check_keys(json, "declaration",
                                {"name", "version", "namespace", "inputs", "outputs", "kernels", "architectures"}));
  PluginDeclaration declaration;
  TO_ASSIGN_OR_RETURN(declaration.identity.name, get_string(json, "declaration", "name", true));
  TO_ASSIGN_OR_RETURN(declaration.identity.version, get_string(json, "declaration", "version", true));
  TO_ASSIGN_OR_RETURN(declaration.identity.plugin_namespace, get_string(json, "declaration", "namespace", false));
  Status error;
  if (const Json* inputs = get_array(json, "declaration", "inputs", &error)) {
    TO_RETURN_IF_ERROR(error);
    for (size_t i = 0; i < inputs->size(); ++i) {
      TO_ASSIGN_OR_RETURN(PluginInput input, parse_input((*inputs)[i], fmt::format("inputs[{}]", i)));
      declaration.io.inputs.push_back(std::move(input));
    }
  }
  if (const Json* outputs = get_array(json, "declaration", "outputs", &error)) {
    TO_RETURN_IF_ERROR(error);
    for (size_t i = 0; i < outputs->size(); ++i) {
      TO_ASSIGN_OR_RETURN(PluginOutput output, parse_output((*outputs)[i], fmt::format("outputs[{}]", i)));
      declaration.io.outputs.push_back(std::move(output));
    }
  }
  TO_RETURN_IF_ERROR(error);
  if (const Json* kernels = get_array(json, "declaration", "kernels", &error)) {
    TO_RETURN_IF_ERROR(error);
    for (size_t i = 0; i < kernels->size(); ++i) {
      if (!(*kernels)[i].is_string()) return invalid_argument("kernels[{}]: expected a string", i);
      declaration.bundle.kernels.push_back((*kernels)[i].get<std::string>());
    }
  }
  if (const Json* architectures = get_array(json, "declaration", "architectures", &error)) {
    TO_RETURN_IF_ERROR(error);
    for (size_t i = 0; i < architectures->size(); ++i) {
      const std::string path = fmt::format("architectures[{}]", i);
      if (!(*architectures)[i].is_string()) return invalid_argument("{}: expected a string", path);
      auto arch = parse_gpu_arch((*architectures)[i].get<std::string>());
      if (!arch) return arch.status().with_context(path);
      declaration.bundle.architectures.push_back(*arch);
    }
  }
  TO_RETURN_IF_ERROR(error);
  TO_RETURN_IF_ERROR(validate_plugin_declaration(declaration));
  return declaration;
}

Json type_format_json(const TypeFormat& type_format) {
  return Json{{"type", std::string(data_type_name(type_format.type))},
              {"format", std::string(tensor_format_name(type_format.format))}};
}

}  // namespace

Result<PluginDeclaration> plugin_declaration_from_json(std::string_view json_text) {
  const Json json = Json::parse(json_text.begin(), json_text.end(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return invalid_argument("plugin declaration is not valid JSON");
  return parse_declaration(json);
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
  std::ifstream file(path, std::ios::binary);
  if (!file) return not_found("cannot open plugin declaration '{}'", path);
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) return io_error("cannot read plugin declaration '{}'", path);
  auto declaration = plugin_declaration_from_json(text.str());
  if (!declaration) return declaration.status().with_context("plugin declaration '" + path + "'");
  return declaration;
}

}  // namespace tensoracle
