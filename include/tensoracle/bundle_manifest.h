// The manifest.json of a cubin bundle: its types, the strict reader, the writer, and which cubins a
// GPU loads. Part of the plugin layer: loading a plugin library reads its bundle's manifest
// (plugin_registry.h); compiling and inspecting bundles is bundle.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tensoracle/plugin.h"
#include "tensoracle/status.h"

namespace tensoracle {

// ---- The manifest -------------------------------------------------------------------------------

inline constexpr std::string_view kBundleManifestFormat = "tensoracle-cubin-bundle";
inline constexpr int kBundleManifestVersion = 1;
inline constexpr std::string_view kBundleManifestFile = "manifest.json";

struct BundleSource {
  std::string name;                  // file name of the .cu source ("elementwise.cu")
  std::string sha256;                // of the source as compiled
  std::vector<std::string> kernels;  // kernels its cubins define (read from the cubins), sorted
};

// One compiled cubin: one source for one architecture.
struct BundleCubin {
  GpuArch arch;
  std::string source;                // a BundleSource name
  std::string path;                  // relative to the bundle directory, '/'-separated
  std::string sha256;
  uint64_t size = 0;                 // bytes
  std::vector<std::string> kernels;  // kernel symbols defined by the cubin (read back from its ELF)
};

struct BundleCompiler {
  std::string version;             // nvcc's own version line, e.g. "Cuda compilation tools, release 13.0, V13.0.88"
  std::vector<std::string> flags;  // flags given to every compile; each cubin adds -arch=<its arch>
};

struct BundleManifest {
  int format_version = kBundleManifestVersion;
  std::string name;
  std::string version;
  BundleCompiler compiler;
  std::vector<BundleSource> sources;
  std::vector<BundleCubin> cubins;
};

// Strict schema check: required keys and types, no unknown keys, the format name and a supported
// format_version, well-formed architectures and SHA-256 strings, every cubin naming a listed source,
// no (source, architecture) pair or path twice. Path *safety* is not judged here (inspect_bundle
// reports it as its own check). Errors are kCorruptData and name the JSON path.
Result<BundleManifest> parse_bundle_manifest(std::string_view json_text);
std::string bundle_manifest_to_json(const BundleManifest& manifest);  // pretty-printed, stable order
// Reads and parses <bundle_dir>/manifest.json.
Result<BundleManifest> read_bundle_manifest(const std::string& bundle_dir);

// The cubins a GPU of compute capability `sm` (e.g. 90) should load: those of the exact
// architecture if the bundle has it, else those of the newest architecture of the same major
// version that is not newer than the GPU and has no 'a' suffix (cubins run on later minor versions
// of their major). Empty when nothing in the bundle can run there.
std::vector<BundleCubin> select_cubins_for_device(const BundleManifest& manifest, int sm);

}  // namespace tensoracle
