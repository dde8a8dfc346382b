// Validation of plugin declarations: every rule names the plugin, the field and the bad value.
#include <algorithm>
#include <cctype>
#include <set>
#include <string>

#include "core/errors.h"
#include "tensoracle/plugin.h"

namespace tensoracle {
namespace {

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
}

// Plugin names, namespaces and versions end up in file names and cache keys: keep them plain.
bool is_plain_name(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), is_name_char);
}

// A symbol as the cubin names it: a C identifier (extern "C") or an Itanium-mangled name.
bool is_symbol_name(const std::string& text) {
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.';
  });
}

bool is_sixteen_bit_float(DataType type) { return type == DataType::kFloat16 || type == DataType::kBFloat16; }

Status check_type_format(const std::string& where, const TypeFormat& type_format) {
  if (type_format.format == TensorFormat::kHwc8 && !is_sixteen_bit_float(type_format.type)) {
    return invalid_argument("{}: format HWC8 needs fp16 or bf16, not {}", where, data_type_name(type_format.type));
  }
  return Status::ok();
}

Status check_identity(const PluginIdentity& identity) {
  if (!is_plain_name(identity.name)) {
    return invalid_argument("plugin name '{}' must be non-empty and use only letters, digits, '_', '.', '-'",
                            identity.name);
  }
  if (!identity.plugin_namespace.empty() && !is_plain_name(identity.plugin_namespace)) {
    return invalid_argument("namespace '{}' may use only letters, digits, '_', '.', '-'", identity.plugin_namespace);
  }
  if (!is_plain_name(identity.version)) {
    return invalid_argument("version '{}' must be non-empty and use only letters, digits, '_', '.', '-'",
                            identity.version);
  }
  return Status::ok();
}

Status check_io(const PluginIO& io) {
  std::set<std::string> names;
  const auto check_name = [&](const std::string& where, const std::string& name) -> Status {
    if (name.empty()) return invalid_argument("{}: a tensor name is required", where);
    if (!names.insert(name).second) return invalid_argument("{}: tensor name '{}' is used twice", where, name);
    return Status::ok();
  };
  for (size_t i = 0; i < io.inputs.size(); ++i) {
    const PluginInput& input = io.inputs[i];
    const std::string where = fmt::format("inputs[{}]", i);
    TO_RETURN_IF_ERROR(check_name(where, input.name));
    if (input.allowed.empty()) {
      return invalid_argument("{} '{}': no allowed (type, format) combination", where, input.name);
    }
    for (size_t k = 0; k < input.allowed.size(); ++k) {
      TO_RETURN_IF_ERROR(check_type_format(fmt::format("{} '{}' allowed[{}]", where, input.name, k), input.allowed[k]));
      if (std::find(input.allowed.begin(), input.allowed.begin() + static_cast<std::ptrdiff_t>(k),
                    input.allowed[k]) != input.allowed.begin() + static_cast<std::ptrdiff_t>(k)) {
        return invalid_argument("{} '{}': {} is listed twice", where, input.name, type_format_name(input.allowed[k]));
      }
    }
  }
  if (io.outputs.empty()) return invalid_argument("a plugin needs at least one output");
  for (size_t i = 0; i < io.outputs.size(); ++i) {
    const PluginOutput& output = io.outputs[i];
    const std::string where = fmt::format("outputs[{}]", i);
    TO_RETURN_IF_ERROR(check_name(where, output.name));
    TO_RETURN_IF_ERROR(check_type_format(fmt::format("{} '{}'", where, output.name), output.type_format));
    if (output.shape.kind == OutputShapeRule::Kind::kCopyInput &&
        (output.shape.input_index < 0 || static_cast<size_t>(output.shape.input_index) >= io.inputs.size())) {
      return invalid_argument("{} '{}': copies the shape of input {}, but the plugin has {} input(s)", where,
                              output.name, output.shape.input_index, io.inputs.size());
    }
  }
  return Status::ok();
}

Status check_kernels(const PluginKernels& bundle) {
  std::set<std::string> kernels;
  for (const std::string& kernel : bundle.kernels) {
    if (!is_symbol_name(kernel)) return invalid_argument("kernel name '{}' is not a symbol name", kernel);
    if (!kernels.insert(kernel).second) return invalid_argument("kernel '{}' is listed twice", kernel);
  }
  std::set<GpuArch> architectures;
  for (const GpuArch& arch : bundle.architectures) {
    if (arch.sm <= 0 || (arch.variant != '\0' && arch.variant != 'a' && arch.variant != 'f')) {
      return invalid_argument("architecture '{}' is not a valid sm_XX name", arch.name());
    }
    if (!architectures.insert(arch).second) return invalid_argument("architecture {} is listed twice", arch.name());
  }
  if (bundle.kernels.empty() != bundle.architectures.empty()) {
    return invalid_argument(bundle.kernels.empty() ? "architectures are listed but no kernels"
                                                   : "kernels are listed but no architectures");
  }
  return Status::ok();
}

}  // namespace

std::string plugin_qualified_name(const PluginIdentity& identity) {
  return identity.plugin_namespace.empty() ? identity.name : identity.plugin_namespace + "::" + identity.name;
}

std::string plugin_display_name(const PluginIdentity& identity) {
  return plugin_qualified_name(identity) + " " + identity.version;
}

bool PluginFingerprint::operator==(const PluginFingerprint& other) const {
  return name == other.name && version == other.version && library_sha256 == other.library_sha256 &&
         bundle_manifest_sha256 == other.bundle_manifest_sha256 && library == other.library;
}

Status validate_plugin_declaration(const PluginDeclaration& declaration) {
  Status status = check_identity(declaration.identity);
  if (status.is_ok()) status = check_io(declaration.io);
  if (status.is_ok()) status = check_kernels(declaration.bundle);
  if (status.is_ok()) return status;
  const std::string who = declaration.identity.name.empty() ? std::string("plugin")
                                                            : "plugin '" + plugin_display_name(declaration.identity) + "'";
  return status.with_context(who);
}

}  // namespace tensoracle
