// Whether a bundle holds what a plugin declares it needs (PluginKernels): the one rule behind both
// `bundle inspect --plugin` (kernels read from the cubins' ELF) and loading a plugin library with
// its bundle (kernels listed by the manifest for cubins that match their hashes).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "tensoracle/bundle_manifest.h"
#include "tensoracle/plugin.h"

namespace tensoracle::bundle {

// Architecture name ("sm_90") -> the kernels the bundle's cubins of that architecture define.
using KernelsByArch = std::map<std::string, std::set<std::string>>;

// One verdict: about a declared architecture (kernel empty) or a declared kernel on one.
struct BundleNeedVerdict {
  GpuArch arch;
  std::string kernel;
  bool passed = false;
  std::string reason;
};

// For each architecture `needs` declares: whether the manifest has cubins for it, then (when it
// does) whether each declared kernel is in `kernels` for it. `who` names the plugin in reasons.
std::vector<BundleNeedVerdict> check_bundle_needs(const std::string& who, const PluginKernels& needs,
                                                  const BundleManifest& manifest, const KernelsByArch& kernels);

}  // namespace tensoracle::bundle
