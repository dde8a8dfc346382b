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
// A registry is a value: copies share the loaded libraries and creators. It is not safe to load
// into one registry from two threads at once; lookups on a registry nobody modifies are.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tensoracle/plugin.h"
#include "tensoracle/plugin_runtime.h"
#include "tensoracle/status.h"

namespace tensoracle {

// A loaded plugin library.
struct PluginLibrary {
  std::string path;       // as given to load_library
  std::string file_name;  // the path's last component: what engines and keys record
  std::string sha256;     // of the file's bytes when it was loaded
  std::vector<std::string> plugins;  // display names of what it registered
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
  // failed or threw, an invalid identity, a plugin already registered (both libraries named).
  Status load_library(const std::string& path);
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
