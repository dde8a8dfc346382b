// The environment an engine is built in and run in, and the compatibility check between the two.
//
// An engine records the environment it was built in (and the plugins it needs). Before an engine
// is deserialized, check_compatibility compares that record with the current environment and says
// exactly why the engine cannot run here: another backend, GPU or compute capability, a driver too
// old for the engine's CUDA runtime, other cuBLASLt/cuDNN versions, a missing plugin.
//
// The same environment enters the cache key (cache.h), so an engine built on one GPU model or with
// one library version is never reused on another.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensoracle/plugin.h"  // PluginFingerprint
#include "tensoracle/status.h"

namespace tensoracle {

// The properties of a GPU that can change what the builder chooses.
struct GpuProperties {
  std::string name;                // "NVIDIA H200"
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int sm_count = 0;
  int64_t l2_cache_bytes = 0;
  int memory_bus_width_bits = 0;
  int64_t shared_memory_per_block_optin_bytes = 0;
  int64_t shared_memory_per_sm_bytes = 0;
  int64_t total_memory_bytes = 0;
  bool ecc_enabled = false;
  bool integrated = false;

  std::string compute_capability() const;  // "9.0"
  bool operator==(const GpuProperties& other) const;
};

// Versions as dotted decimal strings ("13.0", "9.10.2"); empty when the library is not part of
// this build.
struct CudaVersions {
  std::string runtime;   // the CUDA runtime tensoracle was built with
  std::string driver;    // the highest CUDA version the installed driver supports
  std::string cublaslt;
  std::string cudnn;

  bool operator==(const CudaVersions& other) const;
};

struct Environment {
  std::string backend;  // the registry name of the backend that built the engine (docs/backends.md)
  // Null when the backend does not use a GPU (cpu), or none is usable: then
  // cuda_unavailable_reason says why ("no CUDA device: ...").
  std::optional<GpuProperties> gpu;
  std::optional<CudaVersions> cuda;
  std::string cuda_unavailable_reason;  // informational; not serialized into keys
  std::string tensoracle_version;       // "0.1.0"
  std::string os;                       // kernel name, "Linux" (not the release: updates must not rebuild)
  std::string cpu_arch;                 // "x86_64", "aarch64"

  bool operator==(const Environment& other) const;  // compares the serialized fields
};

// The environment of this process for `backend`: the fields every engine records, then the
// backend's own (Backend::probe). For "cpu" the GPU and CUDA fields are null by design (they do
// not affect a CPU build). For "cuda" they are probed (CUDA runtime, device 0, cuBLASLt, cuDNN);
// without a usable device they are null and cuda_unavailable_reason says why. Errors only on a
// backend this build does not have (kNotFound, naming the ones it has).
Result<Environment> probe_environment(std::string_view backend);

// Canonical JSON (sorted keys; "gpu": null / "cuda": null when absent) and its strict parser.
std::string environment_to_json(const Environment& environment);
Result<Environment> environment_from_json(std::string_view json_text, const std::string& source);

// One reason an engine cannot run here. `field` is the dotted name ("gpu.compute_capability",
// "plugins.deform_conv").
struct Incompatibility {
  std::string field;
  std::string engine_value;
  std::string current_value;
  std::string reason;  // a full sentence naming both values
};

// Every reason an engine built in `engine` (needing `engine_plugins`) cannot run in `current`
// (with `available_plugins` loaded); empty when it can. Rules: same backend; for a GPU engine a
// GPU must be present with the same name and compute capability, the driver must support the
// engine's CUDA runtime version, and the cuBLASLt/cuDNN versions must equal the engine's; every
// plugin must be available with the same version (and the same library hash when both are known).
// Properties that only tune performance (SM count, memory size, ...) are in the cache key but do
// not block running.
std::vector<Incompatibility> find_incompatibilities(const Environment& engine,
                                                    const std::vector<PluginFingerprint>& engine_plugins,
                                                    const Environment& current,
                                                    const std::vector<PluginFingerprint>& available_plugins);

// Ok, or kUnsupported listing every incompatibility: "engine 'x.engine' cannot run here: <reason>; <reason>".
Status check_compatibility(const std::string& engine_label, const Environment& engine,
                           const std::vector<PluginFingerprint>& engine_plugins, const Environment& current,
                           const std::vector<PluginFingerprint>& available_plugins);

// Compares dotted decimal versions numerically ("12.10" > "12.9"); missing parts count as 0.
// Non-numeric parts compare as text.
int compare_versions(std::string_view a, std::string_view b);

}  // namespace tensoracle
