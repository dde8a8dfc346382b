// The build declaration: what to build an engine from, and the builder itself.
//
//   EngineBuild build;
//   build.name = "tinynet";
//   build.graph = [](Network& net, const Weights& w) { return tinynet::define(net, w); };
//   build.graph_version = "1";
//   build.weights_path = "weights.safetensors";
//   build.add_input("image", ShapeRange{{1, 3, 16, 16}, {8, 3, 16, 16}, {32, 3, 16, 16}});
//   TO_ASSIGN_OR_RETURN(std::string bytes, build_serialized_engine(build));
//
// The builder defines the network, checks the declared inputs against it (matched by name in any order;
// types, ranks and shape ranges; every mismatch named), computes the key manifest (cache.h), asks the
// backend named by `backend` for a plan and writes the engine file (engine_file.h) with the
// weights the plan uses as aligned blobs, so an engine runs without its safetensors.
// open_engine (open_engine.h) does the same through the cache.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tensoracle/builder_settings.h"
#include "tensoracle/cache.h"
#include "tensoracle/engine_file.h"
#include "tensoracle/network.h"
#include "tensoracle/plugin_registry.h"
#include "tensoracle/safetensors.h"
#include "tensoracle/status.h"

namespace tensoracle {

// Defines the network from the weights. The network's input shapes may hold -1 for dims that the
// declared shape ranges fix per optimization profile.
using GraphFunction = std::function<Status(Network&, const Weights&)>;

// One network input: its type (checked against the network when given) and one shape range per
// optimization profile.
struct InputDeclaration {
  std::string name;
  std::optional<DataType> dtype;
  std::vector<ShapeRange> profiles;
};

struct EngineBuild {
  std::string name;           // engine name (cache entries are grouped by it)
  GraphFunction graph;
  std::string graph_version;  // the model author's version string
  // What the graph was imported from (KeyManifest::source; onnx_engine_build in onnx.h sets it).
  // A build with a source and neither weights nor weights_path has no weights file.
  std::map<std::string, std::string> source;
  // The weights: an opened set, or a path to open (*.safetensors or *.index.json).
  std::optional<Weights> weights;
  std::string weights_path;
  // Inputs in the network's order. May be left empty when every network input has a static shape
  // (one fixed profile then).
  std::vector<InputDeclaration> inputs;
  BuilderSettings settings;
  // The plugins the graph function's plugin layers resolve through (plugin_registry.h). Those a
  // layer uses enter the key manifest (library SHA-256, name, version) and the engine's record of
  // what it needs.
  PluginRegistry plugins;
  // A backend of this build, by its registry name (`tensoracle build --help` lists them; cpu is the
  // reference, compiled into every build).
  std::string backend = "cpu";
  // Progress messages. Unset: long builds print to stderr about once a second unless quiet.
  BuildProgressFn progress;
  bool quiet = false;

  // Adds an input with one range per profile (one range: a single profile).
  EngineBuild& add_input(std::string input_name, std::vector<ShapeRange> ranges, std::optional<DataType> type = {});
  EngineBuild& add_input(std::string input_name, const Dims& fixed_shape, std::optional<DataType> type = {}) {
    return add_input(std::move(input_name), std::vector<ShapeRange>{ShapeRange::fixed(fixed_shape)}, type);
  }
};

// A build after the network is defined and checked: everything the key depends on. `network` is
// the one the backend plans: with settings.precision fp16 or bf16, the precision pass's result;
// the key's graph hash is the defined network's (the precision is a setting of the key).
struct PreparedBuild {
  Network network;
  Weights weights;
  KeyManifest manifest;
  IoTable io_table;
  // What the builder did to the network before planning (the precision pass's report), one line
  // per fact; OpenedEngine::build_log and `tensoracle build` show it.
  std::vector<std::string> log;
};

// Defines and checks the network and computes the key manifest; `sidecar` (optional) remembers
// weight file hashes between runs.
Result<PreparedBuild> prepare_build(const EngineBuild& build, FileHashCache* sidecar = nullptr);
// Plans a prepared build on its backend and assembles the engine file (manifest set).
Result<EngineWriter> plan_engine(const EngineBuild& build, const PreparedBuild& prepared);
// prepare_build + plan_engine: the engine file's bytes.
Result<std::string> build_serialized_engine(const EngineBuild& build);

// "image:1x3x32x32" (fixed) or "image:1x3x32x32:8x3x32x32:32x3x32x32" (min:opt:max) -> the
// input's name and range. Errors name the text and the part at fault.
Result<std::pair<std::string, ShapeRange>> parse_input_spec(const std::string& text);
// "1x3x32x32" -> Dims.
Result<Dims> parse_dims(const std::string& text);

}  // namespace tensoracle
