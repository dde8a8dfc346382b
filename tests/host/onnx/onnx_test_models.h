// ONNX models built in code for the importer's tests: the builder (onnx_model_builder.h), a
// writer to a temporary file, and a runner of an imported model on the cpu backend.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host/io/io_test_support.h"
#include "host/onnx/onnx_model_builder.h"
#include "tensoracle/build.h"
#include "tensoracle/engine.h"
#include "tensoracle/onnx.h"

namespace tensoracle::testing {

inline std::string write_model(const TempDir& dir, const onnx::ModelProto& m, const std::string& name = "model.onnx") {
  const std::string path = dir.file(name);
  std::string bytes;
  EXPECT_TRUE(m.SerializeToString(&bytes));
  write_bytes(path, bytes);
  return path;
}

// Builds an engine of an imported model on the cpu backend (declaring `ranges` for its dynamic
// inputs) and runs it on `inputs`.
inline Result<NamedArrays> run_imported(const ImportedModel& model, const NamedArrayViews& inputs,
                                        const std::map<std::string, ShapeRange>& ranges = {}) {
  TO_ASSIGN_OR_RETURN(EngineBuild build, onnx_engine_build(model, "model"));
  for (const auto& [name, range] : ranges) build.add_input(name, std::vector<ShapeRange>{range});
  build.quiet = true;
  TO_ASSIGN_OR_RETURN(const std::string bytes, build_serialized_engine(build));
  TO_ASSIGN_OR_RETURN(Engine engine, Engine::deserialize(bytes.data(), bytes.size()));
  TO_ASSIGN_OR_RETURN(Execution execution, engine.create_execution());
  return execution.run_on_host(inputs);
}

}  // namespace tensoracle::testing
