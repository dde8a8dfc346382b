// PluginRegistry: the plugins a build or an engine can use, loaded from plugin libraries.
//
//   PluginRegistry plugins;
//   TO_RETURN_IF_ERROR(plugins.load_library("build/libscale_add_plugin.so"));
//   EngineBuild build = ...;
//   build.plugins = plugins;                     // the graph function's plugin layers resolve here
//   TO_ASSIGN_OR_RETURN(OpenedEngine opened, open_engine(build));
//   // An engine file opened on its own needs the same plugins:
//   TO_ASSIGN_OR_RETURN(Engine engine, Engine::open("model.engine", plugins));
//
// A plugin library is a shared object exporting TENSORACLE_PLUGIN_ENTRY_POINT (plugin_runtime.h:
// TENSORACLE_PLUGIN_LIBRARY defines it). load_library dlopens it, checks the interface version it
// was built against, lets it register its creators and records the file's SHA-256: that hash, the
// plugins' identities and versions enter the cache key of every build that uses one, and an
// engine records which plugins (and libraries) it needs. The library's code runs in this process:
// load only libraries you trust. A loaded library stays loaded until the process exits (objects
// it made may outlive every registry).
//
// A library whose creators declare bundle kernels (PluginCreator::bundle) ships with its cubin
// bundle, by default the directory <NAME>_bundle/ beside lib<NAME>.so (what
// tensoracle_add_cubin_plugin builds). load_library reads the bundle's manifest, checks that it
// holds every kernel each creator declares on each declared architecture and that its cubins match
// their recorded sizes and hashes, and records the manifest's SHA-256: it enters the plugins'
// fingerprints, so a changed bundle is a cache miss and an engine built with another bundle is
// refused. The cuda backend loads the kernels from the bundle (Plugin::attach_kernels).
//
// A registry is a value: copies share the loaded libraries and creators. It is not safe to load
// into one registry from two threads at once; lookups on a registry nobody modifies are.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tensoracle/bundle_manifest.h"
#include "tensoracle/plugin.h"
#include "tensoracle/plugin_runtime.h"
#include "tensoracle/status.h"

namespace tensoracle {

// How to load a plugin library.
struct PluginLibraryOptions {
  // Its cubin bundle; empty: <NAME>_bundle beside lib<NAME>.so (the library's directory).
  std::string bundle_dir;
  // Load no bundle. For a library whose creators declare no kernels, and for reading what a
  // library declares (`bundle inspect --plugin`): its plugins with bundle kernels are then
  // refused by the cuda backend (the cpu backend does not need kernels).
  bool without_bundle = false;
};

// A plugin library's cubin bundle, as loaded with it.
struct PluginBundle {
  std::string dir;              // as given or derived
  std::string manifest_sha256;  // of manifest.json's bytes: what fingerprints record
  BundleManifest manifest;      // checked: every cubin matched its size and SHA-256 when loaded
};

// A loaded plugin library.
struct PluginLibrary {
  std::string path;       // as given to load_library
  std::string file_name;  // the path's last component: what engines and keys record
  std::string sha256;     // of the file's bytes when it was loaded
  std::vector<std::string> plugins;  // display names of what it registered
  std::shared_ptr<const PluginBundle> bundle;  // null: loaded without one
};

// One registered plugin: its creator and where it came from (null library: added in process).
struct RegisteredPlugin {
  PluginCreator creator;
  std::shared_ptr<const PluginLibrary> library;

  std::string display_name() const { return plugin_display_name(creator.identity); }
  PluginFingerprint fingerprint() const;
};

class PluginRegistry {
 public:
  // Loads a plugin library and registers its plugins. Errors (nothing is registered then) name
  // the path and say what is wrong: no such file, not a loadable shared object (dlopen's reason),
  // no entry point, built against another interface version (both named), a registration that
  // failed or threw, an invalid identity, a plugin already registered (both libraries named), and
  // for a library whose plugins declare bundle kernels: a bundle that is missing, has an invalid
  // manifest, a cubin that does not match the manifest, or lacks a declared kernel or architecture
  // (the library, the bundle directory and what is missing named).
  Status load_library(const std::string& path, const PluginLibraryOptions& options = {});
  // Registers a plugin compiled into this process (tests, built-in plugins): no library, no hash.
  Status add(PluginCreator creator);

  bool empty() const { return plugins_.empty(); }
  const std::vector<std::shared_ptr<const RegisteredPlugin>>& plugins() const { return plugins_; }
  const std::vector<std::shared_ptr<const PluginLibrary>>& libraries() const { return libraries_; }

  // The plugin `name` (qualified: "example::scale_add") of `version`. kNotFound naming what is
  // registered: the versions of that name, or every plugin.
  Result<const RegisteredPlugin*> find(std::string_view name, std::string_view version) const;
  // The fingerprints of every registered plugin (what an engine's needs are checked against).
  std::vector<PluginFingerprint> fingerprints() const;

 private:
  Status register_plugin(std::shared_ptr<const RegisteredPlugin> plugin);

  std::vector<std::shared_ptr<const RegisteredPlugin>> plugins_;
  std::vector<std::shared_ptr<const PluginLibrary>> libraries_;
};

// Makes the plugin of `registered` from `parameters` through its creator, guarded: an exception,
// a failure, a null plugin, an invalid declaration or one naming another identity is an error
// naming the plugin. Every Execution makes its own plugin object this way.
Result<std::unique_ptr<Plugin>> create_plugin(const RegisteredPlugin& registered, std::string_view parameters);

}  // namespace tensoracle
