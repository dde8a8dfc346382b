// read_model_file (model_file.h).
#include "frontends/onnx/model_file.h"

#include "core/errors.h"
#include "io/mapped_file.h"
#include "tensoracle/hashing.h"
#include "tensoracle/onnx.h"

namespace tensoracle::onnx_import {

Result<ModelFile> read_model_file(const std::string& path) {
  TO_ASSIGN_OR_RETURN(const std::shared_ptr<const MappedFile> file, MappedFile::open(path));
  return parse_model(file->data(), file->size(), path);
}

Result<ModelFile> parse_model(const uint8_t* data, size_t size, const std::string& path) {
  if (static_cast<uint64_t>(size) > static_cast<uint64_t>(kOnnxMaxModelBytes))
    return unsupported("ONNX model '{}': {} bytes exceed the {} bytes a protobuf file can hold (larger models keep "
                       "their weights in external data files next to the model)",
                       path, size, kOnnxMaxModelBytes);
  auto model = std::make_shared<onnx::ModelProto>();
  if (!model->ParseFromArray(data, static_cast<int>(size)))
    return corrupt_data("ONNX model '{}': not a valid ModelProto ({} bytes; truncated or not an ONNX file)", path, size);
  ModelFile out;
  out.sha256 = sha256_hex(data, size);
  for (const onnx::OperatorSetIdProto& set : model->opset_import())
    if (set.domain().empty() || set.domain() == "ai.onnx") out.opset = set.version();
  if (!model->has_graph()) return corrupt_data("ONNX model '{}': the model has no graph", path);
  out.model = std::move(model);
  return out;
}

}  // namespace tensoracle::onnx_import
