// A small, complete engine for tests: every section present, two blobs, two profiles.
#pragma once

#include <string>

#include "tensoracle/engine_file.h"

namespace tensoracle::testing {

inline Environment sample_environment() {
  Environment environment;
  environment.backend = "cpu";
  environment.tensoracle_version = "0.1.0";
  environment.os = "Linux";
  environment.cpu_arch = "x86_64";
  return environment;
}

inline IoTable sample_io_table() {
  IoTable table;
  table.tensors.push_back({"image", true, DataType::kFloat32, TensorFormat::kLinear,
                           {ShapeRange{{1, 3, 8, 8}, {2, 3, 8, 8}, {4, 3, 8, 8}}, ShapeRange::fixed({8, 3, 8, 8})}});
  table.tensors.push_back({"logits", false, DataType::kFloat16, TensorFormat::kLinear,
                           {ShapeRange{{1, 10}, {2, 10}, {4, 10}}, ShapeRange::fixed({8, 10})}});
  return table;
}

// `manifest_json` defaults to a tiny manifest; `blob_bytes` sizes the first blob.
inline EngineWriter sample_engine_writer(const std::string& manifest_json = R"({"engine_name": "sample"})",
                                         size_t blob_bytes = 300) {
  EngineWriter writer;
  writer.set_manifest_json(manifest_json);
  writer.set_environment(sample_environment(), {{"deform_conv", "2", "ab12", "", "libdeform_conv.so"}});
  writer.set_io_table(sample_io_table());
  writer.set_plan("plan: conv -> relu -> fc");
  std::string weights(blob_bytes, '\0');
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<char>(i * 7 + 1);
  (void)writer.add_blob("conv.weight", std::move(weights));
  (void)writer.add_blob("fc.bias", std::string("0123456789"));
  return writer;
}

inline std::string sample_engine_bytes(const std::string& manifest_json = R"({"engine_name": "sample"})",
                                       size_t blob_bytes = 300) {
  return sample_engine_writer(manifest_json, blob_bytes).to_bytes().value();
}

}  // namespace tensoracle::testing
