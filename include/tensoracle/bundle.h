// Cubin bundles: a plugin's CUDA kernels compiled ahead of time for a list of GPU architectures,
// with a manifest.json that says what is inside and lets anyone check it.
//
//   compile_bundle  — compiles kernel sources with nvcc into one cubin per (source, architecture)
//                     and writes the bundle directory atomically;
//   inspect_bundle  — checks a bundle directory (schema, path safety, sizes, hashes, CUDA ELF
//                     headers, kernel symbols, and optionally a plugin declaration's needs);
//   inspect_wheel   — the same for every bundle inside a wheel or zip, read in place.
//
// The manifest (its types, reading and writing it) is bundle_manifest.h. The file format, the
// check names and the rules for reading cubins are in docs/bundles.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensoracle/bundle_manifest.h"
#include "tensoracle/plugin.h"
#include "tensoracle/status.h"

namespace tensoracle {

// ---- Compiling ----------------------------------------------------------------------------------

struct CompileBundleOptions {
  std::string name;                       // bundle name (letters, digits, '_', '.', '-')
  std::string version;                    // bundle version (same characters)
  std::vector<std::string> sources;       // .cu files; their file names must differ
  std::vector<GpuArch> architectures;     // at least one
  std::string out_dir;                    // the bundle directory to create or replace
  std::string nvcc;                       // empty: find_nvcc()
  std::vector<std::string> extra_flags;   // appended to every nvcc command line
  unsigned jobs = 0;                      // nvcc processes at once; 0: one per CPU core
};

// Compiles each source for each architecture (`nvcc -cubin -arch=sm_XX`, in parallel) and writes
// <out_dir>/sm_XX/<source stem>.cubin plus <out_dir>/manifest.json. Nothing is written before the
// inputs are checked and nvcc confirms it supports every architecture (`nvcc --list-gpu-code`).
// Everything is built in a temporary sibling directory and renamed into place, so a failed compile
// leaves no partial bundle. An existing out_dir is replaced only if it is empty or a bundle (has a
// manifest.json). The error of a failed compile names the source, the architecture and quotes nvcc.
Result<BundleManifest> compile_bundle(const CompileBundleOptions& options);

// Locates nvcc, first match wins: `explicit_path` (must then exist: no fallback), $TENSORACLE_NVCC,
// $CUDA_HOME/bin/nvcc, $CUDA_PATH/bin/nvcc, each directory of $PATH, the bin folders of NVIDIA's
// wheels in the project's Python environment ($VIRTUAL_ENV, then a .venv in or above the working
// directory, then in or above the executable's directory: .venv/lib/python3.*/site-packages/
// nvidia/*/bin/), /usr/local/cuda/bin/nvcc. Each file is tried once; the not-found error lists
// every place searched, in order.
Result<std::string> find_nvcc(const std::string& explicit_path = {});

// Locates cuobjdump the same way ($TENSORACLE_CUOBJDUMP; then beside the nvcc find_nvcc() finds;
// then $CUDA_HOME/bin, $CUDA_PATH/bin, $PATH, the Python environment (scripts/setup installs
// NVIDIA's cuobjdump wheel into .venv), /usr/local/cuda/bin).
Result<std::string> find_cuobjdump(const std::string& explicit_path = {});

// ---- Inspecting ---------------------------------------------------------------------------------

// Check names, stable for scripts (docs/bundles.md describes each).
namespace bundle_checks {
inline constexpr std::string_view kManifestSchema = "manifest_schema";
inline constexpr std::string_view kPathSafety = "path_safety";
inline constexpr std::string_view kCubinPresent = "cubin_present";
inline constexpr std::string_view kCubinSize = "cubin_size";
inline constexpr std::string_view kCubinSha256 = "cubin_sha256";
inline constexpr std::string_view kCubinElf = "cubin_elf";
inline constexpr std::string_view kCubinArch = "cubin_arch";
inline constexpr std::string_view kCubinKernels = "cubin_kernels";
inline constexpr std::string_view kNoTf32 = "no_tf32";
inline constexpr std::string_view kPluginArchitectures = "plugin_architectures";
inline constexpr std::string_view kPluginKernels = "plugin_kernels";
inline constexpr std::string_view kWheelArchive = "wheel_archive";
inline constexpr std::string_view kWheelEntryPath = "wheel_entry_path";
inline constexpr std::string_view kWheelBundles = "wheel_bundles";
}  // namespace bundle_checks

struct BundleCheck {
  std::string name;     // one of bundle_checks
  std::string subject;  // what was checked: "manifest.json", "sm_90/elementwise.cubin", "sm_90/scale_bias"
  bool passed = false;
  std::string reason;   // why it passed or failed, in words
};

struct InspectReport {
  std::string target;  // the directory or wheel inspected
  std::vector<BundleCheck> checks;

  bool passed() const;                     // every check passed (and there is at least one)
  std::vector<BundleCheck> failures() const;
};

struct InspectOptions {
  // With a declaration: every architecture it declares has cubins, and every kernel it needs is
  // defined by a cubin of each of those architectures.
  std::optional<PluginDeclaration> plugin;
  // The same for each plugin of a plugin library (plugin_library_bundle_needs); only the identity
  // and the bundle needs are read. Their checks' subjects start with the plugin's qualified name
  // ("example::scale_add/sm_90/scale_bias").
  std::vector<PluginDeclaration> plugins;
  // Disassemble each cubin with cuobjdump and fail any that uses TF32 instructions (an fp32 plugin
  // must compute in full fp32). Needs cuobjdump (find_cuobjdump()).
  bool check_no_tf32 = false;
  std::string cuobjdump;  // explicit cuobjdump for check_no_tf32; empty: find_cuobjdump()
};

// What each plugin of a plugin library needs from its bundle, as the library's creators register
// it (PluginCreator::bundle), for InspectOptions::plugins: the identity and bundle needs of each
// plugin that needs kernels (io is left empty). Loads the library, so its code runs in this
// process; errors are PluginRegistry::load_library's.
Result<std::vector<PluginDeclaration>> plugin_library_bundle_needs(const std::string& library_path);

// Inspects a bundle directory. Failed checks are part of the report, not errors; an error means
// the directory itself could not be examined: it does not exist (not_found), or is something else,
// a regular file or a manifest.json named instead of its directory (invalid_argument, saying so).
Result<InspectReport> inspect_bundle(const std::string& bundle_dir, const InspectOptions& options = {});

// Inspects every bundle (every manifest.json) inside a wheel or zip, reading cubins from the
// archive without extracting it. Every entry name must be a safe relative path (zip-slip); subjects
// of a bundle's checks are prefixed with its directory inside the archive. A file that is not a
// readable zip is a failed wheel_archive check; an error means the file cannot be opened at all.
Result<InspectReport> inspect_wheel(const std::string& wheel_path, const InspectOptions& options = {});

// {"target": ..., "passed": bool, "checks": [{"check", "subject", "passed", "reason"}...]}
std::string inspect_report_to_json(const InspectReport& report);
// One line per check ("PASS cubin_sha256  sm_90/elementwise.cubin  matches the manifest"), then a summary.
std::string inspect_report_to_text(const InspectReport& report);

}  // namespace tensoracle
