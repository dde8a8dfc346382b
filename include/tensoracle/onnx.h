// ONNX import: an ONNX model file becomes a Network, an engine source like a model
// package's graph (docs/onnx.md).
//
//   TO_ASSIGN_OR_RETURN(ImportedModel model, network_from_onnx("resnet.onnx"));
//   // model.network: the graph; model.inputs: the graph inputs, -1 where a dim is symbolic
//   TO_ASSIGN_OR_RETURN(EngineBuild build, onnx_engine_build(model, "resnet"));
//   build.inputs = ...;                    // shape ranges for inputs with symbolic dims
//   TO_ASSIGN_OR_RETURN(OpenedEngine opened, open_engine(build));
//
// The file is untrusted (every file tensoracle reads is): its size, the protobuf, every tensor's type, dims and data
// size, and the graph's structure (names produced twice, inputs nobody produces, cycles) are
// checked, and each problem is reported naming the node, its op type, domain and opset, the
// tensor and the bad value. Opsets 13 and later of the default domain are read. An op, attribute
// value or data type the importer does not map onto the layer set is refused the same way;
// check_onnx_model lists every such node of a model at once.
//
// Initializers and Constant nodes become constants of the Network that borrow the parsed model's
// bytes (no copy for raw_data; typed fields are converted once; external data files next to the
// model are mapped, and must stay inside its directory). Constant inputs of ops whose layers take
// attributes (Reshape's shape, Slice's starts, ...) are read at import time; a node whose inputs
// are all constants is computed at import (the shape computations exporters write fold away).
// Not yet read: Shape of tensors with dynamic dims, and ops outside the list printed by
// `tensoracle onnx ops` (docs/onnx.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensoracle/build.h"
#include "tensoracle/network.h"
#include "tensoracle/status.h"

namespace tensoracle {

// The importer's version: it enters the key manifest of engines built from ONNX models, so a
// change to how a model is imported rebuilds them.
inline constexpr const char* kOnnxImporterVersion = "1";

// The largest model file read (protobuf's own limit is 2 GiB; larger models keep their weights in
// external data files, which have no limit of their own).
inline constexpr int64_t kOnnxMaxModelBytes = int64_t{2} * 1024 * 1024 * 1024 - 1;

// A graph input: its type and shape (-1 for a symbolic or unknown dim; dim_names holds the
// symbol, "" for a fixed or unnamed dim).
struct OnnxInput {
  std::string name;
  DataType dtype = DataType::kFloat32;
  Dims shape;
  std::vector<std::string> dim_names;
};

struct ImportedModel {
  Network network;
  std::vector<OnnxInput> inputs;
  std::string path;
  std::string sha256;   // of the model file: enters the key manifest
  int64_t opset = 0;    // of the default domain
  std::string producer; // producer_name and producer_version, as the file states them
};

// Parses and imports `path`. Errors: the file (missing, too large, not a ModelProto), the graph's
// structure, and the first node that cannot be imported (named with its op type, domain, opset).
Result<ImportedModel> network_from_onnx(const std::string& path);

// One node of check_onnx_model: `supported` false with the reason otherwise.
struct OnnxNodeSupport {
  std::string name;  // the node's name, or "#<index>" when it has none
  std::string op_type;
  std::string domain;  // "" is the default domain ai.onnx
  bool supported = false;
  std::string reason;
};
struct OnnxSupportReport {
  std::string path;
  int64_t opset = 0;
  std::vector<OnnxNodeSupport> nodes;  // in the file's order
  // Problems of the model outside any node (structure, inputs, initializers, the opset); when it
  // is non-empty the model cannot be imported whatever its nodes are.
  std::vector<std::string> model_problems;
  bool importable() const;
};

// Lists what is and is not supported in a model without stopping at the first refused node (a
// node that consumes a refused node's output is reported as depending on it). Errors only when
// the file cannot be read or parsed at all.
Result<OnnxSupportReport> check_onnx_model(const std::string& path);

// The op types of the default domain the importer converts, sorted (some attribute values and
// types of them are still refused; check_onnx_model says which).
std::vector<std::string> onnx_supported_ops();

// An EngineBuild that defines `model`'s network: named `engine_name`, no weights file (the
// constants are the model's), the file's SHA-256 and kOnnxImporterVersion in its key `source`,
// and the inputs declared when every input shape is static (otherwise the caller declares them:
// the error of prepare_build names the input).
Result<EngineBuild> onnx_engine_build(const ImportedModel& model, const std::string& engine_name);

}  // namespace tensoracle
