// Can an engine built in one environment run in another? (environment.h)
#include <algorithm>
#include <charconv>

#include "core/errors.h"
#include "tensoracle/engine_file.h"
#include "tensoracle/environment.h"

namespace tensoracle {
namespace {

std::vector<std::string_view> split_version(std::string_view version) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= version.size()) {
    const size_t dot = std::min(version.find('.', start), version.size());
    parts.push_back(version.substr(start, dot - start));
    start = dot + 1;
  }
  return parts;
}

std::optional<uint64_t> as_number(std::string_view text) {
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string gpu_label(const GpuProperties& gpu) {
  return fmt::format("{} (compute capability {})", gpu.name, gpu.compute_capability());
}

class Collector {
 public:
  void add(std::string field, std::string engine_value, std::string current_value, std::string reason) {
    found.push_back({std::move(field), std::move(engine_value), std::move(current_value), std::move(reason)});
  }
  void require_equal(const std::string& field, const std::string& what, const std::string& engine_value,
                     const std::string& current_value) {
    if (engine_value != current_value)
      add(field, engine_value, current_value,
          fmt::format("the engine was built with {} {}, this process uses {}", what, engine_value,
                      current_value.empty() ? "none" : current_value));
  }
  std::vector<Incompatibility> found;
};

void check_gpu(const Environment& engine, const Environment& current, Collector& out) {
  if (!engine.gpu) return;
  if (!current.gpu) {
    const std::string why = current.cuda_unavailable_reason.empty() ? "no GPU" : current.cuda_unavailable_reason;
    out.add("gpu", gpu_label(*engine.gpu), "none",
            fmt::format("the engine needs a GPU, {}; here: {}", gpu_label(*engine.gpu), why));
    return;
  }
  if (engine.gpu->compute_capability() != current.gpu->compute_capability())
    out.add("gpu.compute_capability", engine.gpu->compute_capability(), current.gpu->compute_capability(),
            fmt::format("the engine was built for compute capability {}, this GPU ({}) has {}",
                        engine.gpu->compute_capability(), current.gpu->name, current.gpu->compute_capability()));
  if (engine.gpu->name != current.gpu->name)
    out.add("gpu.name", engine.gpu->name, current.gpu->name,
            fmt::format("the engine was built for {}, this GPU is {}", engine.gpu->name, current.gpu->name));
}

void check_cuda(const Environment& engine, const Environment& current, Collector& out) {
  if (!engine.cuda) return;
  if (!current.cuda) {
    out.add("cuda", "CUDA " + engine.cuda->runtime, "none",
            fmt::format("the engine needs CUDA {}; here: {}", engine.cuda->runtime,
                        current.cuda_unavailable_reason.empty() ? "no CUDA" : current.cuda_unavailable_reason));
    return;
  }
  if (compare_versions(current.cuda->driver, engine.cuda->runtime) < 0)
    out.add("cuda.driver", engine.cuda->runtime, current.cuda->driver,
            fmt::format("the engine uses CUDA runtime {}, but the driver here supports only CUDA {}; update the driver",
                        engine.cuda->runtime, current.cuda->driver));
  out.require_equal("cuda.cublaslt", "cuBLASLt", engine.cuda->cublaslt, current.cuda->cublaslt);
  out.require_equal("cuda.cudnn", "cuDNN", engine.cuda->cudnn, current.cuda->cudnn);
}

void check_plugins(const std::vector<PluginFingerprint>& needed, const std::vector<PluginFingerprint>& available,
                   Collector& out) {
  for (const PluginFingerprint& plugin : needed) {
    const std::string field = "plugins." + plugin.name;
    std::vector<const PluginFingerprint*> same_name;
    for (const PluginFingerprint& candidate : available)
      if (candidate.name == plugin.name) same_name.push_back(&candidate);
    if (same_name.empty()) {
      const std::string library =
          plugin.library.empty() ? std::string("a library the engine does not name (the plugin was added in process)")
                                 : fmt::format("'{}' (sha256 {})", plugin.library, plugin.library_sha256);
      out.add(field, plugin.version, "missing",
              fmt::format("the engine needs plugin '{}' version {}, which is not loaded; it was built with the plugin "
                          "library {}: pass it with --plugin LIB (plugins= in the API)",
                          plugin.name, plugin.version, library));
      continue;
    }
    const auto same_version = std::find_if(same_name.begin(), same_name.end(),
                                           [&](const PluginFingerprint* p) { return p->version == plugin.version; });
    if (same_version == same_name.end()) {
      out.add(field, plugin.version, same_name.front()->version,
              fmt::format("the engine needs plugin '{}' version {}, the loaded one is version {}{}", plugin.name,
                          plugin.version, same_name.front()->version,
                          same_name.front()->library.empty() ? std::string()
                                                             : fmt::format(" (from '{}')", same_name.front()->library)));
      continue;
    }
    const PluginFingerprint& loaded = **same_version;
    if (!plugin.library_sha256.empty() && !loaded.library_sha256.empty() &&
        plugin.library_sha256 != loaded.library_sha256)
      out.add(field + ".library_sha256", plugin.library_sha256, loaded.library_sha256,
              fmt::format("plugin '{}' version {} is loaded from a different library (sha256 {}, the engine was "
                          "built with {})",
                          plugin.name, plugin.version, loaded.library_sha256, plugin.library_sha256));
    // The cubins are part of what the plugin computes with: another bundle is another plugin.
    if (plugin.bundle_manifest_sha256 != loaded.bundle_manifest_sha256) {
      const auto shown = [](const std::string& sha) { return sha.empty() ? std::string("none") : sha; };
      out.add(field + ".bundle_manifest_sha256", shown(plugin.bundle_manifest_sha256), shown(loaded.bundle_manifest_sha256),
              fmt::format("plugin '{}' version {} is loaded with a different cubin bundle (manifest sha256 {}, the "
                          "engine was built with {}); load its library with the bundle the engine was built with",
                          plugin.name, plugin.version, shown(loaded.bundle_manifest_sha256),
                          shown(plugin.bundle_manifest_sha256)));
    }
  }
}

}  // namespace

int compare_versions(std::string_view a, std::string_view b) {
  const auto left = split_version(a);
  const auto right = split_version(b);
  for (size_t i = 0; i < std::max(left.size(), right.size()); ++i) {
    const std::string_view x = i < left.size() ? left[i] : "0";
    const std::string_view y = i < right.size() ? right[i] : "0";
    const auto nx = as_number(x);
    const auto ny = as_number(y);
    if (nx && ny) {
      if (*nx != *ny) return *nx < *ny ? -1 : 1;
    } else if (x != y) {
      return x < y ? -1 : 1;
    }
  }
  return 0;
}

std::vector<Incompatibility> find_incompatibilities(const Environment& engine,
                                                    const std::vector<PluginFingerprint>& engine_plugins,
                                                    const Environment& current,
                                                    const std::vector<PluginFingerprint>& available_plugins) {
  Collector out;
  if (engine.backend != current.backend) {
    out.add("backend", engine.backend, current.backend,
            fmt::format("the engine was built for the {} backend, this process runs the {} backend", engine.backend,
                        current.backend));
  } else {
    check_gpu(engine, current, out);
    check_cuda(engine, current, out);
  }
  check_plugins(engine_plugins, available_plugins, out);
  return out.found;
}

Status check_compatibility(const std::string& engine_label, const Environment& engine,
                           const std::vector<PluginFingerprint>& engine_plugins, const Environment& current,
                           const std::vector<PluginFingerprint>& available_plugins) {
  const auto problems = find_incompatibilities(engine, engine_plugins, current, available_plugins);
  if (problems.empty()) return Status::ok();
  std::string reasons;
  for (const auto& problem : problems) reasons += (reasons.empty() ? "" : "; ") + problem.reason;
  return unsupported("engine '{}' cannot run here: {}", engine_label, reasons);
}

Status check_engine_compatibility(const EngineFile& engine, const Environment& current,
                                  const std::vector<PluginFingerprint>& available_plugins) {
  return check_compatibility(engine.label(), engine.environment(), engine.required_plugins(), current,
                             available_plugins);
}

}  // namespace tensoracle
