// Model packages: shared libraries that export graph functions with their defaults (weights,
// input shapes), so the CLI (`tensoracle build --package LIB`) and programs can build engines of
// models they were not compiled with (docs/model-packages.md).
//
//   TO_ASSIGN_OR_RETURN(ModelPackage package, ModelPackage::load("libtensoracle_example_tinynet.so"));
//   TO_ASSIGN_OR_RETURN(EngineBuild build, package.engine_build("tinynet"));  // the package's defaults
//   build.settings.optimization_level = 0;
//   TO_ASSIGN_OR_RETURN(OpenedEngine opened, open_engine(build));              // open_engine.h
//
// A package exports one C entry point:
//
//   extern "C" const TensoracleModelPackage* tensoracle_model_package_v1(void);
//
// returning a static description: the package name, the tensoracle version it was compiled
// against (TENSORACLE_VERSION_STRING; the loader refuses another version, since graph functions
// exchange C++ objects), and its graphs. Each graph has a name, a graph version, a description,
// a default weights file (absolute, or relative to the directory of the shared library), default
// input shapes ("image:2x3x16x16", or "image:1x3x16x16:2x3x16x16:8x3x16x16" for min:opt:max,
// several separated by ';') and the graph function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tensoracle/build.h"
#include "tensoracle/network.h"
#include "tensoracle/safetensors.h"
#include "tensoracle/status.h"

extern "C" {

// The graph function: the same contract as tensoracle::GraphFunction.
typedef tensoracle::Status (*TensoracleGraphFn)(tensoracle::Network& network, const tensoracle::Weights& weights);

typedef struct TensoracleModelGraph {
  const char* name;
  const char* graph_version;
  const char* description;
  const char* default_weights;  // absolute, or relative to the library's directory
  const char* default_inputs;   // "NAME:DIMS[:OPT:MAX];NAME:..."; empty or null: the network's static shapes
  TensoracleGraphFn define;
} TensoracleModelGraph;

typedef struct TensoracleModelPackage {
  const char* name;
  const char* tensoracle_version;  // TENSORACLE_VERSION_STRING at the package's build
  size_t num_graphs;
  const TensoracleModelGraph* graphs;
} TensoracleModelPackage;

// The one symbol a package exports; define it as
//   TENSORACLE_PACKAGE_EXPORT const TensoracleModelPackage* tensoracle_model_package_v1(void) { ... }
// (exported even when the package builds with hidden visibility).
#define TENSORACLE_MODEL_PACKAGE_ENTRY "tensoracle_model_package_v1"
#define TENSORACLE_PACKAGE_EXPORT extern "C" __attribute__((visibility("default")))
typedef const TensoracleModelPackage* (*TensoracleModelPackageEntryFn)(void);
}

namespace tensoracle {

struct ModelGraphInfo {
  std::string name;
  std::string graph_version;
  std::string description;
  std::string default_weights;  // resolved to a path (empty when the package gives none)
  std::vector<InputDeclaration> default_inputs;
};

// A loaded package. Its library is never unloaded: objects its graph functions made (networks,
// constants and their deleters) may outlive every handle on it.
class ModelPackage {
 public:
  // dlopen()s `path`; errors name the library and the reason (not found, the missing entry
  // symbol, a version mismatch, a malformed description).
  static Result<ModelPackage> load(const std::string& path);

  const std::string& path() const;
  const std::string& name() const;
  const std::vector<ModelGraphInfo>& graphs() const;
  // The graph `name`; errors list the package's graphs.
  Result<ModelGraphInfo> graph(const std::string& name) const;
  // An EngineBuild for graph `name` with the package's defaults (name, version, weights, inputs,
  // graph function), to be adjusted by the caller.
  Result<EngineBuild> engine_build(const std::string& name) const;

 private:
  struct Impl;
  explicit ModelPackage(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

// Input declarations from specs "NAME:DIMS" or "NAME:MIN:OPT:MAX" (parse_input_spec), in order of
// first appearance. A NAME given again declares its range in the next optimization profile:
//   {"image:1x3x32x32", "image:8x3x32x32"}  -> image, profiles 0 and 1
// Every input must then have the same number of profiles; errors name the counts.
Result<std::vector<InputDeclaration>> declare_inputs(const std::vector<std::string>& specs);

// Parses "NAME:DIMS[:OPT:MAX];..." (the specs of declare_inputs, separated by ';').
Result<std::vector<InputDeclaration>> parse_input_specs(const std::string& text);

}  // namespace tensoracle
