// The kernels a plugin declares (PluginKernels), loaded from its library's cubin bundle for a GPU
// and handed to Plugin::attach_kernels as a PluginKernelSource.
#pragma once

#include <memory>

#include "tensoracle/plugin_registry.h"

namespace tensoracle::backends::cuda {

// Whether `registered`'s bundle can serve a GPU of compute capability `sm` (90 for sm_90): the
// cubins select_cubins_for_device picks. Errors name the plugin and either the library loaded
// without a bundle, or the GPU's architecture and the architectures the bundle has.
Status check_bundle_serves(const RegisteredPlugin& registered, int sm);

// The kernels of `registered`'s bundle on `device` (compute capability `sm`). The bundle's cubins
// for it are loaded with cudaLibraryLoadData once per (device, bundle directory, manifest hash)
// and stay loaded until the process exits, like the plugin library itself. Each cubin is checked
// against the SHA-256 the manifest records before it is loaded.
Result<std::shared_ptr<PluginKernelSource>> load_plugin_kernels(const RegisteredPlugin& registered, int device, int sm);

}  // namespace tensoracle::backends::cuda
