// tensoracle inspect ENGINE [--json]
//
// Describes an engine file without running it (so engines built elsewhere can be inspected):
// what it was built for, its I/O table, its layers after fusion with their tactics and
// precisions (and for plugin layers the type/format of each input and output), its memory, and
// (--build-log, or "build_log" in --json) the backend's build log. Exit status: 0, or 2 when the file is not a valid engine.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "command.h"
#include "io/strict_json.h"
#include "tensoracle/byte_size.h"
#include "tensoracle/cache.h"
#include "tensoracle/engine_file.h"

namespace tensoracle::cli {
namespace {

using nlohmann::json;

struct InspectArgs {
  std::string path;
  bool json = false;
  bool build_log = false;
};

// The backend's build log kept in the plan (the cuda planner's: fusion decisions, every tactic
// candidate skipped and why); the string entries only, as the engine may be hostile.
std::vector<std::string> plan_build_log(const nlohmann::json& plan) {
  std::vector<std::string> lines;
  if (!plan.is_object() || !plan.contains("build_log") || !plan["build_log"].is_array()) return lines;
  for (const auto& line : plan["build_log"])
    if (line.is_string()) lines.push_back(line.get<std::string>());
  return lines;
}

json range_json(const ShapeRange& r) { return json{{"min", r.min.values()}, {"opt", r.opt.values()}, {"max", r.max.values()}}; }

std::string range_text(const ShapeRange& r) {
  if (r.min == r.max) return r.min.to_string();
  return fmt::format("{}..{} (opt {})", r.min.to_string(), r.max.to_string(), r.opt.to_string());
}

// What the engine was built with: the same fields as the JSON "environment".
std::string environment_text(const Environment& e, const std::vector<PluginFingerprint>& plugins) {
  std::string text = "\nenvironment:\n";
  text += fmt::format("  backend      {}\n  tensoracle   {}\n  os           {} ({})\n", e.backend, e.tensoracle_version,
                      e.os, e.cpu_arch);
  if (e.gpu)
    text += fmt::format("  gpu          {} (compute capability {}, {} SMs, {} memory, L2 {})\n", e.gpu->name,
                        e.gpu->compute_capability(), e.gpu->sm_count, format_byte_size(static_cast<uint64_t>(e.gpu->total_memory_bytes)),
                        format_byte_size(static_cast<uint64_t>(e.gpu->l2_cache_bytes)));
  else
    text += "  gpu          none (the backend does not use one)\n";
  if (e.cuda)
    text += fmt::format("  cuda         runtime {}, driver {}, cuBLASLt {}, cuDNN {}\n", e.cuda->runtime, e.cuda->driver,
                        e.cuda->cublaslt, e.cuda->cudnn);
  for (const PluginFingerprint& p : plugins)
    text += fmt::format("  plugin       {} {} (library sha256 {})\n", p.name, p.version, p.library_sha256);
  return text;
}

// A plugin layer's negotiated formats: the cpu plan records them as "formats", the cuda plan as
// its tactic's choice. Null for other layers.
const json* plugin_formats(const json& layer) {
  if (layer.contains("formats")) return &layer["formats"];
  if (layer.contains("choice") && layer["choice"].is_object() && layer["choice"].contains("formats"))
    return &layer["choice"]["formats"];
  return nullptr;
}

// "       input 0: fp16/HWC8  input 1: fp32/LINEAR  output 0: fp32/LINEAR"; an engine's hostile
// entries are shown as JSON.
std::string formats_text(const json& formats) {
  std::string text = "       formats:";
  for (const char* role : {"inputs", "outputs"}) {
    if (!formats.is_object() || !formats.contains(role) || !formats[role].is_array()) continue;
    const json& list = formats[role];
    for (size_t i = 0; i < list.size(); ++i)
      text += fmt::format("  {} {}: {}", role == std::string("inputs") ? "input" : "output", i,
                          list[i].is_string() ? list[i].get<std::string>() : list[i].dump());
  }
  return text + "\n";
}

void run_inspect(const InspectArgs& args) {
  auto opened = EngineFile::open(args.path);
  if (!opened.is_ok()) fail_usage(opened.status().message());
  const EngineFile& file = *opened;
  // Through the strict reader (bounded depth): the engine may be hostile, and its JSON is walked
  // and printed below. A section that does not parse is shown by its size only.
  const auto strict = [&](std::string_view text, const char* what) {
    auto parsed = parse_strict_json(text, fmt::format("engine '{}', {}", file.label(), what));
    return parsed.is_ok() ? *std::move(parsed) : json();
  };
  const json manifest = strict(file.manifest_json(), "key manifest");
  const json plan = strict(file.plan().as_string_view(), "plan");
  uint64_t blob_bytes = 0;
  for (const EngineBlobInfo& b : file.blobs()) blob_bytes += b.size;

  json io = json::array();
  for (const IoTensor& t : file.io_table().tensors) {
    json ranges = json::array();
    for (const ShapeRange& r : t.profiles) ranges.push_back(range_json(r));
    io.push_back(json{{"name", t.name}, {"role", t.is_input ? "input" : "output"}, {"dtype", std::string(data_type_name(t.dtype))},
                      {"format", std::string(tensor_format_name(t.format))}, {"profiles", ranges}});
  }
  json layers = plan.is_object() && plan.contains("layers") ? plan["layers"] : json::array();
  json memory = plan.is_object() && plan.contains("memory") ? plan["memory"] : json::object();
  memory["weight_blobs_bytes"] = blob_bytes;
  memory["file_bytes"] = file.bytes().size;

  if (args.json) {
    json out{{"path", file.label()},
             {"format_version", file.format_version()},
             {"checksum_xxh3_128", file.checksum_hex()},
             {"key", cache_key_of_manifest_json(file.manifest_json())},
             {"engine_name", manifest.is_object() ? manifest.value("engine_name", std::string()) : std::string()},
             {"backend", file.environment().backend},
             {"environment", strict(environment_to_json(file.environment()), "environment")},
             {"io", io},
             {"layers", layers},
             {"memory", memory},
             {"plan_bytes", file.plan().size},
             {"build_log", plan_build_log(plan)},
             {"blobs", file.blobs().size()}};
    if (manifest.is_object()) out["manifest"] = manifest;
    print_result(out.dump(2) + "\n");
    throw CommandExit{kExitOk};
  }
  std::string text = fmt::format("engine {} ({} backend, format v{})\nname: {}\nkey: {}\nchecksum: {}\n", file.label(),
                                 file.environment().backend, file.format_version(),
                                 manifest.is_object() ? manifest.value("engine_name", std::string()) : std::string("?"),
                                 cache_key_of_manifest_json(file.manifest_json()), file.checksum_hex());
  text += environment_text(file.environment(), file.required_plugins());
  text += "\nI/O:\n";
  for (const IoTensor& t : file.io_table().tensors) {
    std::string ranges;
    for (size_t p = 0; p < t.profiles.size(); ++p) ranges += fmt::format("{}[{}] {}", p ? "  " : "", p, range_text(t.profiles[p]));
    text += fmt::format("  {:<6} {:<16} {:<6} {:<6} {}\n", t.is_input ? "input" : "output", t.name, data_type_name(t.dtype),
                        tensor_format_name(t.format),
                        ranges);
  }
  text += fmt::format("\nlayers ({}):\n", layers.size());
  text += fmt::format("  {:<4} {:<28} {:<16} {:<16} {}\n", "#", "NAME", "KIND", "TACTIC", "PRECISION");
  for (size_t i = 0; i < layers.size(); ++i) {
    const json& l = layers[i];
    text += fmt::format("  {:<4} {:<28} {:<16} {:<16} {}\n", i, l.value("name", ""), l.value("kind", ""), l.value("tactic", ""),
                        l.value("precision", ""));
    if (const json* formats = l.is_object() ? plugin_formats(l) : nullptr) text += formats_text(*formats);
  }
  text += "\nmemory:\n";
  for (const auto& [key, value] : memory.items()) text += fmt::format("  {:<26} {}\n", key, value.dump());
  const std::vector<std::string> log = plan_build_log(plan);
  if (args.build_log) {
    text += fmt::format("\nbuild log ({} lines):\n", log.size());
    for (const std::string& line : log) text += "  " + line + "\n";
  } else if (!log.empty()) {
    text += fmt::format("\nbuild log: {} lines (--build-log shows them)\n", log.size());
  }
  print_result(text);
  throw CommandExit{kExitOk};
}

void add_inspect_command(CLI::App& app) {
  auto args = std::make_shared<InspectArgs>();
  CLI::App* cmd = app.add_subcommand(
      "inspect", "Describe an engine file: I/O table, layers after fusion with tactics and precision, memory, key, environment.");
  cmd->add_option("ENGINE", args->path, "Engine file")->required();
  cmd->add_flag("--json", args->json, "Machine-readable output (the backend's build log included, as \"build_log\")");
  cmd->add_flag("--build-log", args->build_log,
                "Also print the backend's build log: which layers were fused or kept apart, and every tactic candidate "
                "skipped and why");
  cmd->callback([args] { run_inspect(*args); });
}

const CommandRegistration kInspect{"inspect", 45, &add_inspect_command};

}  // namespace
}  // namespace tensoracle::cli
