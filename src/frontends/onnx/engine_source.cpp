// onnx_engine_build (onnx.h): an imported model as an EngineBuild.
#include <memory>

#include "core/errors.h"
#include "tensoracle/onnx.h"

namespace tensoracle {

Result<EngineBuild> onnx_engine_build(const ImportedModel& model, const std::string& engine_name) {
  if (engine_name.empty()) return invalid_argument("ONNX model '{}': the engine name is empty", model.path);
  auto network = std::make_shared<const Network>(model.network);
  EngineBuild build;
  build.name = engine_name;
  build.graph = [network](Network& net, const Weights&) {
    net = *network;
    return Status::ok();
  };
  build.graph_version = "onnx";
  build.source = {{"onnx_sha256", model.sha256}, {"onnx_importer", kOnnxImporterVersion}};
  bool all_static = true;
  for (const OnnxInput& input : model.inputs) all_static = all_static && input.shape.is_static();
  if (all_static)
    for (const OnnxInput& input : model.inputs) build.add_input(input.name, input.shape, input.dtype);
  return build;
}

}  // namespace tensoracle
