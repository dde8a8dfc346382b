#include "plugin/library_bundle.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <string_view>

#include "core/errors.h"
#include "io/mapped_file.h"
#include "plugin/bundle_needs.h"
#include "plugin/bundle_path_safety.h"
#include "tensoracle/hashing.h"

namespace tensoracle::plugin {
namespace {

namespace fs = std::filesystem;

std::string_view as_text(const MappedFile& file) {
  return {reinterpret_cast<const char*>(file.data()), file.size()};
}

// Every cubin is where the manifest says, of the size and SHA-256 it records. A path is checked
// lexically only: a symlink inside the bundle may point anywhere, but what it leads to must still
// have the recorded hash.
Status check_cubins(const std::string& dir, const BundleManifest& manifest) {
  for (const BundleCubin& cubin : manifest.cubins) {
    if (auto reason = bundle::unsafe_path_reason(cubin.path)) return corrupt_data("cubin '{}': {}", cubin.path, *reason);
    TO_ASSIGN_OR_RETURN_CONTEXT(const auto file, MappedFile::open(dir + "/" + cubin.path), fmt::format("cubin '{}'", cubin.path));
    if (file->size() != cubin.size)
      return corrupt_data("cubin '{}' has {} bytes, the manifest records {}", cubin.path, file->size(), cubin.size);
    const std::string digest = sha256_hex(file->data(), file->size());
    if (digest != cubin.sha256)
      return corrupt_data("cubin '{}' has SHA-256 {}, the manifest records {}", cubin.path, digest, cubin.sha256);
  }
  return Status::ok();
}

// What the library's creators lack in the bundle, one reason each; the kernels of a cubin are the
// ones its manifest entry lists (compile_bundle read them from the cubin's ELF).
std::vector<std::string> missing_needs(const BundleManifest& manifest, const std::vector<PluginCreator>& creators) {
  bundle::KernelsByArch kernels;
  for (const BundleCubin& cubin : manifest.cubins) kernels[cubin.arch.name()].insert(cubin.kernels.begin(), cubin.kernels.end());
  std::vector<std::string> missing;
  for (const PluginCreator& creator : creators) {
    for (const auto& verdict : bundle::check_bundle_needs(plugin_display_name(creator.identity), creator.bundle, manifest, kernels))
      if (!verdict.passed) missing.push_back(verdict.reason);
  }
  return missing;
}

}  // namespace

Result<std::string> default_bundle_dir(const std::string& library_path) {
  const fs::path path(library_path);
  const std::string file = path.filename().string();
  constexpr std::string_view kPrefix = "lib", kSuffix = ".so";
  if (file.size() <= kPrefix.size() + kSuffix.size() || file.compare(0, kPrefix.size(), kPrefix) != 0 ||
      file.compare(file.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0)
    return invalid_argument("its bundle directory cannot be derived from the file name '{}' (expected lib<NAME>.so, "
                            "whose bundle is <NAME>_bundle beside it); name the bundle directory",
                            file);
  const std::string name = file.substr(kPrefix.size(), file.size() - kPrefix.size() - kSuffix.size());
  return (path.parent_path() / (name + "_bundle")).string();
}

Result<std::shared_ptr<const PluginBundle>> load_library_bundle(const std::string& library_path,
                                                                const PluginLibraryOptions& options,
                                                                const std::vector<PluginCreator>& creators) {
  std::vector<std::string> needing;
  for (const PluginCreator& creator : creators)
    if (!creator.bundle.kernels.empty()) needing.push_back(plugin_display_name(creator.identity));
  if (options.without_bundle || (needing.empty() && options.bundle_dir.empty())) return std::shared_ptr<const PluginBundle>();

  const std::string what = fmt::format("plugin library '{}'", library_path);
  std::string dir = options.bundle_dir;
  if (dir.empty()) {
    TO_ASSIGN_OR_RETURN_CONTEXT(dir, default_bundle_dir(library_path), what);
  }
  const std::string why = needing.empty() ? std::string("it was named")
                                          : fmt::format("{} declare(s) bundle kernels", fmt::join(needing, ", "));
  std::error_code error;
  if (!fs::is_directory(dir, error))
    return not_found("{}: its cubin bundle '{}' {} ({}; build it with tensoracle_add_cubin_plugin or `tensoracle bundle "
                     "compile`, or name it: PluginLibraryOptions::bundle_dir, `--plugin LIB:BUNDLE_DIR`)",
                     what, dir, fs::exists(dir, error) ? "is not a directory" : "does not exist", why);
  const std::string context = fmt::format("{}: its cubin bundle '{}'", what, dir);
  const std::string manifest_path = dir + "/" + std::string(kBundleManifestFile);
  TO_ASSIGN_OR_RETURN_CONTEXT(const auto manifest_file, MappedFile::open(manifest_path), context);

  auto loaded = std::make_shared<PluginBundle>();
  loaded->dir = dir;
  loaded->manifest_sha256 = sha256_hex(manifest_file->data(), manifest_file->size());
  TO_ASSIGN_OR_RETURN_CONTEXT(loaded->manifest, parse_bundle_manifest(as_text(*manifest_file)), context);
  TO_RETURN_IF_ERROR(check_cubins(dir, loaded->manifest).with_context(context));
  const std::vector<std::string> missing = missing_needs(loaded->manifest, creators);
  if (!missing.empty())
    return invalid_argument("{} lacks what its plugins declare: {} (`tensoracle bundle inspect {} --plugin {}` shows "
                            "every check)",
                            context, fmt::join(missing, "; "), dir, library_path);
  return std::shared_ptr<const PluginBundle>(std::move(loaded));
}

}  // namespace tensoracle::plugin
