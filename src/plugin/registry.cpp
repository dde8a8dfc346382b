// PluginRegistry (plugin_registry.h): registration, lookup with errors that list what is there,
// fingerprints, and guarded plugin creation.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/errors.h"
#include "plugin/plugin_call.h"
#include "tensoracle/plugin_registry.h"

namespace tensoracle {

namespace {

std::string origin(const RegisteredPlugin& plugin) {
  return plugin.library ? fmt::format("library '{}'", plugin.library->path) : std::string("this process");
}

// The same kernels on the same architectures, in any order.
bool same_needs(const PluginKernels& a, const PluginKernels& b) {
  std::vector<std::string> ak = a.kernels, bk = b.kernels;
  std::vector<GpuArch> aa = a.architectures, ba = b.architectures;
  std::sort(ak.begin(), ak.end());
  std::sort(bk.begin(), bk.end());
  std::sort(aa.begin(), aa.end());
  std::sort(ba.begin(), ba.end());
  return ak == bk && aa == ba;
}

std::string describe_needs(const PluginKernels& needs) {
  if (needs.kernels.empty()) return "no bundle kernels";
  std::vector<std::string> archs;
  for (const GpuArch& arch : needs.architectures) archs.push_back(arch.name());
  return fmt::format("kernels [{}] on [{}]", fmt::join(needs.kernels, ", "), fmt::join(archs, ", "));
}

}  // namespace

PluginFingerprint RegisteredPlugin::fingerprint() const {
  PluginFingerprint out;
  out.name = plugin_qualified_name(creator.identity);
  out.version = creator.identity.version;
  if (library) {
    out.library_sha256 = library->sha256;
    out.library = library->file_name;
    if (library->bundle) out.bundle_manifest_sha256 = library->bundle->manifest_sha256;
  }
  return out;
}

Status PluginRegistry::register_plugin(std::shared_ptr<const RegisteredPlugin> plugin) {
  const PluginIdentity& id = plugin->creator.identity;
  // The creator's identity and bundle needs are a declaration's: check them with its rules.
  PluginDeclaration identity_only;
  identity_only.identity = id;
  identity_only.io.inputs.push_back(PluginInput{"x", {TypeFormat{}}});
  identity_only.io.outputs.push_back(PluginOutput{"y", TypeFormat{}, OutputShapeRule::copy_input(0)});
  identity_only.bundle = plugin->creator.bundle;
  TO_RETURN_IF_ERROR(validate_plugin_declaration(identity_only).with_context(origin(*plugin)));
  if (!plugin->creator.create)
    return invalid_argument("{}: plugin '{}' was registered without a create function", origin(*plugin),
                            plugin->display_name());
  for (const auto& existing : plugins_) {
    const PluginIdentity& other = existing->creator.identity;
    if (plugin_qualified_name(other) == plugin_qualified_name(id) && other.version == id.version)
      return invalid_argument("plugin '{}' is registered twice: by {} and by {}", plugin->display_name(), origin(*existing),
                              origin(*plugin));
  }
  plugins_.push_back(std::move(plugin));
  return Status::ok();
}

Status PluginRegistry::add(PluginCreator creator) {
  return register_plugin(std::make_shared<const RegisteredPlugin>(RegisteredPlugin{std::move(creator), nullptr}));
}

Result<const RegisteredPlugin*> PluginRegistry::find(std::string_view name, std::string_view version) const {
  std::vector<std::string> versions;
  for (const auto& plugin : plugins_) {
    if (plugin_qualified_name(plugin->creator.identity) != name) continue;
    if (plugin->creator.identity.version == version) return plugin.get();
    versions.push_back(fmt::format("{} (from {})", plugin->creator.identity.version, origin(*plugin)));
  }
  if (!versions.empty())
    return not_found("plugin '{}' version {} is not loaded; loaded versions: {}", name, version, fmt::join(versions, ", "));
  std::vector<std::string> all;
  for (const auto& plugin : plugins_) all.push_back(plugin->display_name());
  return not_found("plugin '{}' version {} is not loaded ({}); pass the library that provides it "
                   "(EngineBuild::plugins, `--plugin LIB`)",
                   name, version, all.empty() ? std::string("no plugins are loaded") : "loaded: " + fmt::format("{}", fmt::join(all, ", ")));
}

std::vector<PluginFingerprint> PluginRegistry::fingerprints() const {
  std::vector<PluginFingerprint> out;
  for (const auto& plugin : plugins_) out.push_back(plugin->fingerprint());
  return out;
}

Result<std::unique_ptr<Plugin>> create_plugin(const RegisteredPlugin& registered, std::string_view parameters) {
  const std::string who = registered.display_name();
  TO_ASSIGN_OR_RETURN(std::unique_ptr<Plugin> made, plugin::call_plugin(who, "create", [&]() {
                        return registered.creator.create(parameters);
                      }));
  if (!made) return invalid_argument("plugin '{}' create: returned no plugin and no error", who);
  TO_ASSIGN_OR_RETURN(const PluginDeclaration declaration, plugin::call_plugin(who, "declaration", [&]() {
                        return Result<PluginDeclaration>(made->declaration());
                      }));
  TO_RETURN_IF_ERROR(validate_plugin_declaration(declaration));
  if (plugin_display_name(declaration.identity) != who)
    return invalid_argument("plugin '{}' create: made a plugin that declares itself '{}'", who,
                            plugin_display_name(declaration.identity));
  // bundle inspect checks a library by its creators' needs: a plugin needing other kernels would
  // pass that check and then miss a kernel at run time.
  if (!same_needs(declaration.bundle, registered.creator.bundle))
    return invalid_argument("plugin '{}' create: made a plugin that declares {}, but it was registered with {}", who,
                            describe_needs(declaration.bundle), describe_needs(registered.creator.bundle));
  return made;
}

}  // namespace tensoracle
