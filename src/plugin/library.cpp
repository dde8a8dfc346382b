// PluginRegistry::load_library (plugin_registry.h): a plugin library opened with dlopen, its
// interface version checked, its creators registered, its bytes hashed, its cubin bundle checked
// (library_bundle.h).
#include <dlfcn.h>
#include <fmt/format.h>

#include <filesystem>
#include <optional>
#include <system_error>

#include "core/errors.h"
#include "plugin/library_bundle.h"
#include "tensoracle/hashing.h"
#include "tensoracle/plugin_registry.h"

namespace tensoracle {

namespace {

namespace fs = std::filesystem;

// Collects what the library's entry point registers; nothing reaches a registry before the whole
// library has registered without error.
class CollectingRegistrar final : public PluginRegistrar {
 public:
  bool accepts_abi(uint32_t library_abi_version) override {
    library_abi = library_abi_version;
    return library_abi_version == kPluginAbiVersion;
  }
  void add(PluginCreator creator) override { creators.push_back(std::move(creator)); }
  void fail(const std::string& message) override { failure = message; }

  std::optional<uint32_t> library_abi;
  std::vector<PluginCreator> creators;
  std::optional<std::string> failure;
};

}  // namespace

Status PluginRegistry::load_library(const std::string& path, const PluginLibraryOptions& options) {
  const std::string what = fmt::format("plugin library '{}'", path);
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (error || !fs::exists(status)) return not_found("{} does not exist", what);
  if (!fs::is_regular_file(status)) return invalid_argument("{} is not a regular file", what);
  TO_ASSIGN_OR_RETURN_CONTEXT(std::string sha256, sha256_file_hex(path), what);

  // A bare file name would make dlopen search the system paths; libraries are files.
  const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  // RTLD_NODELETE: plugin objects and their creators' state may outlive every registry.
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* why = dlerror();
    return invalid_argument("{} cannot be loaded: {}", what, why ? why : "unknown dlopen error");
  }
  auto entry = reinterpret_cast<TensoraclePluginEntryFn>(dlsym(handle, TENSORACLE_PLUGIN_ENTRY_POINT));
  if (entry == nullptr)
    return not_found("{} has no entry point '{}' (a plugin library defines it with TENSORACLE_PLUGIN_LIBRARY, "
                     "plugin_runtime.h; docs/plugins.md)",
                     what, TENSORACLE_PLUGIN_ENTRY_POINT);
  CollectingRegistrar registrar;
  try {
    entry(&registrar);
  } catch (...) {
    return invalid_argument("{}: its entry point '{}' threw an exception", what, TENSORACLE_PLUGIN_ENTRY_POINT);
  }
  if (!registrar.library_abi)
    return invalid_argument("{}: its entry point did not report the plugin interface version it was built against", what);
  if (*registrar.library_abi != kPluginAbiVersion)
    return unsupported("{} was built against plugin interface version {}; this tensoracle has version {} (rebuild the "
                       "library against this tensoracle's headers)",
                       what, *registrar.library_abi, kPluginAbiVersion);
  if (registrar.failure) return invalid_argument("{}: {}", what, *registrar.failure);
  if (registrar.creators.empty()) return invalid_argument("{} registered no plugins", what);
  TO_ASSIGN_OR_RETURN(std::shared_ptr<const PluginBundle> bundle, plugin::load_library_bundle(path, options, registrar.creators));

  auto library = std::make_shared<PluginLibrary>();
  library->path = path;
  library->file_name = fs::path(path).filename().string();
  library->sha256 = std::move(sha256);
  library->bundle = std::move(bundle);
  for (const PluginCreator& creator : registrar.creators) library->plugins.push_back(plugin_display_name(creator.identity));
  // All or nothing: register into a copy, keep it only when every plugin registered.
  PluginRegistry updated = *this;
  for (PluginCreator& creator : registrar.creators)
    TO_RETURN_IF_ERROR(updated.register_plugin(std::make_shared<const RegisteredPlugin>(RegisteredPlugin{std::move(creator), library})));
  updated.libraries_.push_back(std::move(library));
  *this = std::move(updated);
  return Status::ok();
}

}  // namespace tensoracle
