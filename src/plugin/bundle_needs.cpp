#include "plugin/bundle_needs.h"

#include <fmt/format.h>

#include <algorithm>

namespace tensoracle::bundle {

std::vector<BundleNeedVerdict> check_bundle_needs(const std::string& who, const PluginKernels& needs,
                                                  const BundleManifest& manifest, const KernelsByArch& kernels) {
  std::vector<BundleNeedVerdict> verdicts;
  for (const GpuArch& arch : needs.architectures) {
    const bool listed = std::any_of(manifest.cubins.begin(), manifest.cubins.end(),
                                    [&](const BundleCubin& cubin) { return cubin.arch == arch; });
    verdicts.push_back({arch, "", listed,
                        listed ? fmt::format("{} has cubins for it", manifest.name)
                               : fmt::format("{} declares {}, but the bundle has no cubin for it", who, arch.name())});
    if (!listed) continue;
    const auto found = kernels.find(arch.name());
    for (const std::string& kernel : needs.kernels) {
      const bool defined = found != kernels.end() && found->second.count(kernel) != 0;
      verdicts.push_back({arch, kernel, defined,
                          defined ? "defined by a readable cubin"
                                  : fmt::format("{} needs kernel '{}', but no readable {} cubin defines it", who, kernel,
                                                arch.name())});
    }
  }
  return verdicts;
}

}  // namespace tensoracle::bundle
