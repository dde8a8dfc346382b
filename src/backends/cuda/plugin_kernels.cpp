#include "backends/cuda/plugin_kernels.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

#include "backends/cuda/cuda_check.h"
#include "io/mapped_file.h"
#include "tensoracle/hashing.h"

namespace tensoracle::backends::cuda {
namespace {

// One loaded cubin and the kernels its manifest entry lists.
struct LoadedCubin {
  std::string path;  // relative to the bundle
  std::vector<std::string> kernels;
  std::shared_ptr<const MappedFile> image;  // kept: lazy loading may read it after cudaLibraryLoadData
  cudaLibrary_t library = nullptr;
};

using LoadedBundle = std::vector<LoadedCubin>;

class BundleKernels final : public PluginKernelSource {
 public:
  BundleKernels(std::string who, std::string dir, std::shared_ptr<const LoadedBundle> cubins)
      : who_(std::move(who)), dir_(std::move(dir)), cubins_(std::move(cubins)) {}

  Result<void*> kernel(std::string_view name) override {
    for (const LoadedCubin& cubin : *cubins_) {
      if (std::find(cubin.kernels.begin(), cubin.kernels.end(), name) == cubin.kernels.end()) continue;
      const std::string symbol(name);
      cudaKernel_t kernel = nullptr;
      TO_RETURN_IF_ERROR(cuda_status(cudaLibraryGetKernel(&kernel, cubin.library, symbol.c_str()), "cudaLibraryGetKernel")
                             .with_context(fmt::format("kernel '{}' of cubin '{}/{}'", name, dir_, cubin.path)));
      return static_cast<void*>(kernel);
    }
    std::vector<std::string> paths;
    for (const LoadedCubin& cubin : *cubins_) paths.push_back(cubin.path);
    return not_found("plugin '{}' asked for kernel '{}', which no cubin of its bundle '{}' loaded for this GPU defines "
                     "(loaded: {})",
                     who_, name, dir_, fmt::join(paths, ", "));
  }

 private:
  std::string who_;
  std::string dir_;
  std::shared_ptr<const LoadedBundle> cubins_;
};

Result<const PluginBundle*> bundle_of(const RegisteredPlugin& registered) {
  if (!registered.library || !registered.library->bundle)
    return invalid_argument("plugin '{}' needs kernels from a cubin bundle, but {} was loaded without one (load it with "
                            "its bundle: PluginLibraryOptions, `--plugin LIB[:BUNDLE_DIR]`)",
                            registered.display_name(),
                            registered.library ? fmt::format("its library '{}'", registered.library->path)
                                               : std::string("it was added in process and"));
  return registered.library->bundle.get();
}

Result<LoadedCubin> load_cubin(const std::string& dir, const BundleCubin& cubin) {
  LoadedCubin loaded{cubin.path, cubin.kernels, nullptr, nullptr};
  TO_ASSIGN_OR_RETURN(loaded.image, MappedFile::open(dir + "/" + cubin.path));
  // The bundle's fingerprint is its manifest: a cubin changed since the library was loaded would
  // run under the old fingerprint.
  const std::string digest = sha256_hex(loaded.image->data(), loaded.image->size());
  if (digest != cubin.sha256)
    return corrupt_data("cubin '{}' has SHA-256 {}, the manifest records {} (it changed after the library was loaded)",
                        cubin.path, digest, cubin.sha256);
  TO_CUDA_RETURN_IF_ERROR(cudaLibraryLoadData(&loaded.library, loaded.image->data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  return loaded;
}

}  // namespace

Status check_bundle_serves(const RegisteredPlugin& registered, int sm) {
  TO_ASSIGN_OR_RETURN(const PluginBundle* bundle, bundle_of(registered));
  if (!select_cubins_for_device(bundle->manifest, sm).empty()) return Status::ok();
  std::set<std::string> archs;
  for (const BundleCubin& cubin : bundle->manifest.cubins) archs.insert(cubin.arch.name());
  return unsupported("plugin '{}': its cubin bundle '{}' has no cubin this GPU (sm_{}) can run; the bundle has {}",
                     registered.display_name(), bundle->dir, sm, fmt::join(archs, ", "));
}

Result<std::shared_ptr<PluginKernelSource>> load_plugin_kernels(const RegisteredPlugin& registered, int device, int sm) {
  TO_RETURN_IF_ERROR(check_bundle_serves(registered, sm));
  const PluginBundle& bundle = **bundle_of(registered);
  using Key = std::tuple<int, std::string, std::string>;
  // Never unloaded: plugin objects of any Execution may hold these kernels until the process exits.
  static std::mutex mutex;
  static std::map<Key, std::shared_ptr<const LoadedBundle>> loaded_bundles;
  const Key key{device, bundle.dir, bundle.manifest_sha256};
  std::shared_ptr<const LoadedBundle> cubins;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    auto found = loaded_bundles.find(key);
    if (found == loaded_bundles.end()) {
      auto loading = std::make_shared<LoadedBundle>();
      for (const BundleCubin& cubin : select_cubins_for_device(bundle.manifest, sm)) {
        TO_ASSIGN_OR_RETURN_CONTEXT(LoadedCubin one, load_cubin(bundle.dir, cubin),
                                    fmt::format("plugin '{}': cubin bundle '{}'", registered.display_name(), bundle.dir));
        loading->push_back(std::move(one));
      }
      found = loaded_bundles.emplace(key, std::move(loading)).first;
    }
    cubins = found->second;
  }
  // shared_ptr: it deletes through BundleKernels (PluginKernelSource's destructor is protected).
  return std::shared_ptr<PluginKernelSource>(std::make_shared<BundleKernels>(registered.display_name(), bundle.dir, std::move(cubins)));
}

}  // namespace tensoracle::backends::cuda
