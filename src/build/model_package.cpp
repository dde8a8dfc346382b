// Loading model packages with dlopen (package.h).
#include <dlfcn.h>
#include <fmt/format.h>

#include <filesystem>

#include "core/errors.h"
#include "tensoracle/package.h"
#include "tensoracle/version.h"

namespace tensoracle {

namespace fs = std::filesystem;

struct ModelPackage::Impl {
  std::shared_ptr<void> library;  // dlclose()s the handle when the last user goes
  std::string path;
  std::string name;
  std::vector<ModelGraphInfo> graphs;
  std::vector<TensoracleGraphFn> functions;  // parallel to graphs
};

Result<ModelPackage> ModelPackage::load(const std::string& path) {
  // A bare file name would make dlopen search the system paths; packages are files.
  const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  // RTLD_NODELETE: objects made by a graph function (constants' owners, their deleters) may
  // outlive every handle on the package, so its code is never unmapped.
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* why = dlerror();
    return not_found("model package '{}' cannot be loaded: {}", path, why ? why : "unknown dlopen error");
  }
  auto impl = std::make_shared<Impl>();
  impl->library = std::shared_ptr<void>(handle, [](void* h) { dlclose(h); });
  impl->path = path;
  auto entry = reinterpret_cast<TensoracleModelPackageEntryFn>(dlsym(handle, TENSORACLE_MODEL_PACKAGE_ENTRY));
  if (entry == nullptr)
    return not_found("model package '{}' has no symbol '{}' (a package exports extern \"C\" {}; see docs/model-packages.md)",
                     path, TENSORACLE_MODEL_PACKAGE_ENTRY, TENSORACLE_MODEL_PACKAGE_ENTRY);
  const TensoracleModelPackage* desc = entry();
  if (desc == nullptr) return invalid_argument("model package '{}': {}() returned null", path, TENSORACLE_MODEL_PACKAGE_ENTRY);
  const std::string version = desc->tensoracle_version ? desc->tensoracle_version : "";
  if (version != TENSORACLE_VERSION_STRING)
    return unsupported("model package '{}' was built against tensoracle {}, this is {}; rebuild the package", path,
                       version.empty() ? "(unknown)" : version, TENSORACLE_VERSION_STRING);
  impl->name = desc->name ? desc->name : "";
  if (impl->name.empty()) return invalid_argument("model package '{}': the package has no name", path);
  if (desc->num_graphs > 0 && desc->graphs == nullptr)
    return invalid_argument("model package '{}': {} graphs declared but the table is null", path, desc->num_graphs);
  const fs::path library_dir = fs::absolute(fs::path(file)).parent_path();
  for (size_t i = 0; i < desc->num_graphs; ++i) {
    const TensoracleModelGraph& g = desc->graphs[i];
    if (g.name == nullptr || *g.name == '\0' || g.define == nullptr)
      return invalid_argument("model package '{}': graph {} has no name or no graph function", path, i);
    ModelGraphInfo info;
    info.name = g.name;
    info.graph_version = g.graph_version ? g.graph_version : "";
    info.description = g.description ? g.description : "";
    if (g.default_weights && *g.default_weights) {
      fs::path weights(g.default_weights);
      info.default_weights = (weights.is_absolute() ? weights : library_dir / weights).lexically_normal().string();
    }
    if (g.default_inputs && *g.default_inputs) {
      TO_ASSIGN_OR_RETURN_CONTEXT(info.default_inputs, parse_input_specs(g.default_inputs),
                                  fmt::format("model package '{}' graph '{}'", path, info.name));
    }
    impl->graphs.push_back(std::move(info));
    impl->functions.push_back(g.define);
  }
  return ModelPackage(std::move(impl));
}

const std::string& ModelPackage::path() const { return impl_->path; }
const std::string& ModelPackage::name() const { return impl_->name; }
const std::vector<ModelGraphInfo>& ModelPackage::graphs() const { return impl_->graphs; }

Result<ModelGraphInfo> ModelPackage::graph(const std::string& name) const {
  std::string known;
  for (const ModelGraphInfo& g : impl_->graphs) {
    if (g.name == name) return g;
    known += (known.empty() ? "" : ", ") + g.name;
  }
  return not_found("model package '{}' has no graph '{}' (it has: {})", impl_->path, name, known);
}

Result<EngineBuild> ModelPackage::engine_build(const std::string& name) const {
  for (size_t i = 0; i < impl_->graphs.size(); ++i) {
    const ModelGraphInfo& g = impl_->graphs[i];
    if (g.name != name) continue;
    EngineBuild build;
    build.name = g.name;
    build.graph_version = g.graph_version;
    build.weights_path = g.default_weights;
    build.inputs = g.default_inputs;
    // The function lives in the library: the build keeps it loaded.
    std::shared_ptr<const Impl> keep = impl_;
    TensoracleGraphFn fn = impl_->functions[i];
    build.graph = [keep, fn](Network& net, const Weights& weights) { return fn(net, weights); };
    return build;
  }
  return graph(name).status();
}

}  // namespace tensoracle
