#include "bundle/inspect_core.h"

#include <algorithm>

#include "bundle/cubin_elf.h"
#include "bundle/sass_tf32.h"
#include "core/errors.h"
#include "plugin/bundle_needs.h"
#include "plugin/bundle_path_safety.h"
#include "tensoracle/hashing.h"

namespace tensoracle::bundle {
namespace {

namespace names = bundle_checks;

std::string join(const std::vector<std::string>& items, size_t limit = 8) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < limit; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > limit) out += fmt::format(", ... ({} in all)", items.size());
  return out;
}

class Recorder {
 public:
  Recorder(std::vector<BundleCheck>& checks, std::string prefix) : checks_(checks), prefix_(std::move(prefix)) {}
  bool add(std::string_view name, const std::string& subject, bool passed, std::string reason) {
    checks_.push_back({std::string(name), prefix_ + subject, passed, std::move(reason)});
    return passed;
  }

 private:
  std::vector<BundleCheck>& checks_;
  std::string prefix_;
};

// The cuobjdump used for the no-TF32 check, found once per inspection.
class Disassembler {
 public:
  explicit Disassembler(const InspectOptions& options) : explicit_path_(options.cuobjdump) {}
  Result<std::vector<std::string>> tf32_instructions(const std::string& cubin) {
    if (!path_) path_ = find_cuobjdump(explicit_path_);
    if (!path_->is_ok()) return path_->status();
    return find_tf32_instructions(**path_, cubin);
  }

 private:
  std::string explicit_path_;
  std::optional<Result<std::string>> path_;
};

// Checks one cubin entry; returns the kernels its ELF defines when it could be read as a cubin.
std::optional<std::vector<std::string>> inspect_cubin(const BundleCubin& cubin, const BundleFiles& files,
                                                      const InspectOptions& options, Disassembler& disassembler,
                                                      Recorder& record) {
  const std::string& subject = cubin.path;
  if (auto reason = unsafe_path_reason(cubin.path)) {
    record.add(names::kPathSafety, subject, false, *reason + "; the cubin was not read");
    return std::nullopt;
  }
  if (auto reason = files.escapes(cubin.path)) {
    record.add(names::kPathSafety, subject, false, *reason + "; the cubin was not read");
    return std::nullopt;
  }
  record.add(names::kPathSafety, subject, true, "relative path inside the bundle");

  auto bytes = files.read(cubin.path);
  if (!bytes) {
    record.add(names::kCubinPresent, subject, false, bytes.status().message());
    return std::nullopt;
  }
  record.add(names::kCubinPresent, subject, true, "present");
  record.add(names::kCubinSize, subject, bytes->size() == cubin.size,
             bytes->size() == cubin.size
                 ? fmt::format("{} bytes as recorded", cubin.size)
                 : fmt::format("{} bytes, the manifest records {}", bytes->size(), cubin.size));
  const std::string digest = sha256_hex(*bytes);
  record.add(names::kCubinSha256, subject, digest == cubin.sha256,
             digest == cubin.sha256 ? "matches the manifest"
                                    : fmt::format("is {}, the manifest records {}", digest, cubin.sha256));

  auto info = read_cubin(bytes->data(), bytes->size());
  if (!info) {
    record.add(names::kCubinElf, subject, false, "not a valid CUDA ELF: " + info.status().message());
    return std::nullopt;
  }
  record.add(names::kCubinElf, subject, true,
             fmt::format("CUDA ELF, ABI v{}, e_flags {:#x}", info->abi_version == kCudaAbiV1 ? 1 : 2, info->e_flags));
  record.add(names::kCubinArch, subject, info->sm == cubin.arch.sm,
             info->sm == cubin.arch.sm
                 ? fmt::format("ELF header says sm_{}", info->sm)
                 : fmt::format("ELF header says sm_{}, the manifest files it as {}", info->sm, cubin.arch.name()));

  std::vector<std::string> missing;
  for (const std::string& kernel : cubin.kernels) {
    if (!std::binary_search(info->kernels.begin(), info->kernels.end(), kernel)) missing.push_back(kernel);
  }
  record.add(names::kCubinKernels, subject, missing.empty(),
             missing.empty() ? fmt::format("all {} listed kernel(s) defined", cubin.kernels.size())
                             : fmt::format("listed but not defined: {}; the cubin defines: {}", join(missing),
                                           info->kernels.empty() ? std::string("no kernels") : join(info->kernels)));

  if (options.check_no_tf32) {
    auto tf32 = disassembler.tf32_instructions(*bytes);
    if (!tf32) {
      record.add(names::kNoTf32, subject, false, "cannot disassemble: " + tf32.status().message());
    } else {
      record.add(names::kNoTf32, subject, tf32->empty(),
                 tf32->empty() ? std::string("no TF32 instruction")
                               : fmt::format("{} TF32 instruction(s): {}", tf32->size(), join(*tf32, 3)));
    }
  }
  return info->kernels;
}

// `subject_prefix` tells the plugins of one library apart ("example::scale_add/sm_90/scale_bias").
void inspect_plugin(const PluginDeclaration& plugin, const BundleManifest& manifest, const KernelsByArch& kernels_by_arch,
                    const std::string& subject_prefix, Recorder& record) {
  for (const BundleNeedVerdict& verdict :
       check_bundle_needs(plugin_display_name(plugin.identity), plugin.bundle, manifest, kernels_by_arch)) {
    if (verdict.kernel.empty())
      record.add(names::kPluginArchitectures, subject_prefix + verdict.arch.name(), verdict.passed, verdict.reason);
    else
      record.add(names::kPluginKernels, subject_prefix + verdict.arch.name() + "/" + verdict.kernel, verdict.passed,
                 verdict.reason);
  }
}

}  // namespace

void inspect_manifest(const std::string& manifest_text, const BundleFiles& files, const std::string& prefix,
                      const InspectOptions& options, std::vector<BundleCheck>& checks) {
  Recorder record(checks, prefix);
  const std::string manifest_name(kBundleManifestFile);
  auto manifest = parse_bundle_manifest(manifest_text);
  if (!manifest) {
    record.add(names::kManifestSchema, manifest_name, false, manifest.status().message());
    return;
  }
  record.add(names::kManifestSchema, manifest_name, true,
             fmt::format("format version {}, bundle {} {}, {} cubin(s)", manifest->format_version, manifest->name,
                         manifest->version, manifest->cubins.size()));

  Disassembler disassembler(options);
  KernelsByArch kernels_by_arch;
  for (const BundleCubin& cubin : manifest->cubins) {
    auto kernels = inspect_cubin(cubin, files, options, disassembler, record);
    if (kernels) kernels_by_arch[cubin.arch.name()].insert(kernels->begin(), kernels->end());
  }
  if (options.plugin) inspect_plugin(*options.plugin, *manifest, kernels_by_arch, "", record);
  for (const PluginDeclaration& plugin : options.plugins)
    inspect_plugin(plugin, *manifest, kernels_by_arch, plugin_qualified_name(plugin.identity) + "/", record);
}

}  // namespace tensoracle::bundle
