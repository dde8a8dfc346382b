// What a plugin declares: its identity, the tensors it accepts and produces (PluginIO), and the
// kernels it needs from its cubin bundle on each GPU architecture it supports.
//
// A declaration is plain data. It is written in C++ or read from the JSON file that
// `tensoracle bundle inspect --plugin DECLARATION.json` takes (docs/bundles.md shows the format).
// validate_plugin_declaration() rejects inconsistent declarations; the JSON reader validates too.
//
// The runtime half of a plugin (supported formats, output shapes, workspace size, configure,
// enqueue on a stream, an optional CPU implementation for the reference backend) is the Plugin
// class of plugin_runtime.h; plugin libraries and the registry that loads them are
// plugin_registry.h.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tensoracle/status.h"
#include "tensoracle/tensor_format.h"
#include "tensoracle/types.h"

namespace tensoracle {

// A real GPU architecture as nvcc names it: "sm_90", or with a feature suffix "sm_90a", "sm_100f".
struct GpuArch {
  int sm = 0;          // compute capability major*10 + minor: 90 for sm_90
  char variant = '\0';  // 'a' (architecture-specific), 'f' (family-specific) or none

  std::string name() const;  // "sm_90a"
  friend bool operator==(const GpuArch& a, const GpuArch& b) { return a.sm == b.sm && a.variant == b.variant; }
  friend bool operator!=(const GpuArch& a, const GpuArch& b) { return !(a == b); }
  friend bool operator<(const GpuArch& a, const GpuArch& b) {
    return a.sm != b.sm ? a.sm < b.sm : a.variant < b.variant;
  }
};

// Parses "sm_<digits>[a|f]" (also accepts "SM_90"); the error shows the expected form.
Result<GpuArch> parse_gpu_arch(std::string_view name);

// One input: every (type, format) combination the plugin accepts for it. The builder picks one
// combination per input when it negotiates formats with neighbouring layers.
struct PluginInput {
  std::string name;
  std::vector<TypeFormat> allowed = {TypeFormat{}};  // default: fp32/LINEAR only
};

// How an output's shape is known: copied from one input, or computed by the plugin at build time.
struct OutputShapeRule {
  enum class Kind : uint8_t { kCopyInput, kComputed };
  Kind kind = Kind::kCopyInput;
  int input_index = 0;  // for kCopyInput: which input's shape the output has

  static OutputShapeRule copy_input(int index) { return {Kind::kCopyInput, index}; }
  static OutputShapeRule computed() { return {Kind::kComputed, 0}; }
};

struct PluginOutput {
  std::string name;
  TypeFormat type_format;  // default: fp32/LINEAR
  OutputShapeRule shape;   // default: input 0's shape
};

struct PluginIO {
  std::vector<PluginInput> inputs;
  std::vector<PluginOutput> outputs;
};

// Names the plugin in engines, cache keys and error messages as "<namespace>::<name> <version>".
struct PluginIdentity {
  std::string name;
  std::string version;
  std::string plugin_namespace;  // may be empty
};

// What the plugin needs from its cubin bundle: these kernels, on each of these architectures.
// Both lists are empty for a plugin without GPU kernels.
struct PluginKernels {
  std::vector<std::string> kernels;      // symbol names as they appear in the cubin (extern "C")
  std::vector<GpuArch> architectures;
};

struct PluginDeclaration {
  PluginIdentity identity;
  PluginIO io;
  PluginKernels bundle;
};

// "example::scale_mul 1.0.0".
std::string plugin_display_name(const PluginIdentity& identity);
// "example::scale_mul" (the name alone when the namespace is empty): how a plugin layer and an
// engine name the plugin (PluginAttributes::plugin, PluginFingerprint::name).
std::string plugin_qualified_name(const PluginIdentity& identity);

// What an engine records of a plugin it needs, and what the key manifest records of a plugin a
// build used: its qualified name and version, the library that provided it (file name, no
// directory) and that library's SHA-256, and the SHA-256 of the cubin bundle manifest it ships
// (empty when none). An in-process plugin (PluginRegistry::add) has no library.
struct PluginFingerprint {
  std::string name;
  std::string version;
  std::string library_sha256;
  std::string bundle_manifest_sha256;
  std::string library;  // "libscale_add.so"

  bool operator==(const PluginFingerprint& other) const;
};

// Rejects inconsistent declarations, naming the plugin, the field and the bad value: empty or
// malformed names, duplicate tensor names, an input without allowed combinations or with duplicate
// ones, HWC8 with a type that is not fp16/bf16, no outputs, an output copying the shape of an input
// that does not exist, duplicate kernels or architectures, kernels without architectures and
// architectures without kernels.
Status validate_plugin_declaration(const PluginDeclaration& declaration);

// JSON (de)serialization of a declaration. The reader is strict: unknown keys, wrong types and
// invalid values are errors naming the JSON path ("outputs[0].shape.copy_input"), and the result
// has passed validate_plugin_declaration(). Omitted optional fields take the defaults above.
Result<PluginDeclaration> plugin_declaration_from_json(std::string_view json_text);
std::string plugin_declaration_to_json(const PluginDeclaration& declaration);  // pretty-printed
Result<PluginDeclaration> read_plugin_declaration(const std::string& path);   // errors name the file

}  // namespace tensoracle
