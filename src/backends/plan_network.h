// What every backend's engine plan shares: the network itself (network.h to_json) with its
// constants table, the constants' bytes as engine blobs ("const/<sha256>", one per distinct
// constant, so an engine runs without the safetensors it was built from), and concrete shape
// inference over the layers that reach an output. docs/engines.md shows the layout.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.h"
#include "io/json_field.h"
#include "tensoracle/engine_file.h"
#include "tensoracle/network.h"

namespace tensoracle::backends {

// The network's JSON, its constants table and the blobs to store.
struct NetworkPlan {
  nlohmann::json network;
  nlohmann::json constants;
  std::vector<PlanBlob> blobs;
  uint64_t weight_bytes = 0;
};
NetworkPlan plan_network(const Network& network);

// The bytes of blob `name`, kept alive by the returned owner.
using BlobLookup = std::function<Result<ConstantBytes>(const std::string& blob_name)>;
// The weight blobs of an engine file; what they return keeps (a copy of) the file alive, so
// constants may borrow them for as long as the restored plan lives.
BlobLookup engine_blobs(const EngineFile& file);
// Rebuilds the network from a plan's "network" and "constants" members; constants borrow the
// blobs, whose size must be the constant's dtype x shape and whose SHA-256 the one recorded. The
// engine layer calls it once per engine (engine/engine_validation.h, CheckedPlan::network).
Result<Network> restore_network(const JsonField& plan, const BlobLookup& blobs);

// The input shapes of one direct run (Backend::execute): every array names an input of the
// network, every input is given, with the declared dtype and rank and a static shape that agrees
// with the declared dims. `backend` names the caller in errors ("cpu backend: input 'x' ...").
Result<std::map<std::string, Dims>> given_input_shapes(const Network& network, const NamedArrayViews& inputs,
                                                       std::string_view backend);

// Concrete descriptions of every tensor for concrete input shapes (inference over live layers;
// tensors of dead layers keep an empty description).
Result<std::vector<TensorDesc>> infer_tensor_descs(const Network& network, const std::map<std::string, Dims>& input_shapes);
// Shapes of every marked output (by name) for concrete input shapes.
Result<std::map<std::string, Dims>> infer_output_shapes(const Network& network,
                                                        const std::map<std::string, Dims>& input_shapes);

}  // namespace tensoracle::backends
