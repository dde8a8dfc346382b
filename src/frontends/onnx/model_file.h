// Reading an ONNX model file: size limit, protobuf parse, SHA-256 of the bytes, and the opset of
// the default domain.
#pragma once

#include <memory>
#include <string>

#include "onnx-ml.pb.h"
#include "tensoracle/onnx.h"
#include "tensoracle/status.h"

namespace tensoracle::onnx_import {

struct ModelFile {
  std::shared_ptr<const onnx::ModelProto> model;
  std::string sha256;
  int64_t opset = 0;  // of the default domain (ai.onnx); 0 when the model imports none
};

// Errors name the file: missing, a directory, over kOnnxMaxModelBytes, not a ModelProto.
Result<ModelFile> read_model_file(const std::string& path);
// The same for bytes already in memory, named `path` in errors (the fuzz target's entry).
Result<ModelFile> parse_model(const uint8_t* data, size_t size, const std::string& path);

// The import of a parsed model; `path` names it in errors and locates its external data files.
// network_from_onnx and check_onnx_model are read_model_file followed by these.
Result<ImportedModel> import_model(const ModelFile& file, const std::string& path);
Result<OnnxSupportReport> check_model(const ModelFile& file, const std::string& path);

// The oldest default-domain opset read.
inline constexpr int64_t kOldestOpset = 13;

}  // namespace tensoracle::onnx_import
