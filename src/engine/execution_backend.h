// What an Execution needs from a backend's restored plan: one object per Execution, used by one
// thread at a time. Shapes arrive checked against the profile; buffers are in the backend's memory.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tensoracle/engine.h"

namespace tensoracle {

class ExecutionBackend {
 public:
  virtual ~ExecutionBackend() = default;
  // Output shapes (by name) for the given input shapes (by name).
  virtual Result<std::map<std::string, Dims>> output_shapes(const std::map<std::string, Dims>& input_shapes) = 0;
  // Runs with every input and output bound; `output_shapes` is what output_shapes returned.
  virtual Status enqueue(const std::map<std::string, Dims>& input_shapes, const std::map<std::string, void*>& bindings,
                         const std::map<std::string, Dims>& output_shapes, void* stream) = 0;
  // Runs on host arrays (Execution::run_on_host): stages them in and the outputs out.
  virtual Result<NamedArrays> run_on_host(const std::map<std::string, Dims>& input_shapes, const NamedArrayViews& inputs,
                                          const std::map<std::string, Dims>& output_shapes, const IoTable& io) = 0;
  // Per-layer times on the bound buffers (Execution::profile_layers); kUnsupported by default.
  virtual Result<std::vector<LayerTiming>> profile_layers(const std::map<std::string, void*>& bindings, void* stream,
                                                          int iterations);
};

// A backend's plan restored from an engine file; shared by every Execution of an Engine.
class RestoredPlan {
 public:
  virtual ~RestoredPlan() = default;
  virtual Result<std::unique_ptr<ExecutionBackend>> create_execution() const = 0;
};

// Restores the plan of `file` for its backend (file.environment().backend).
Result<std::shared_ptr<const RestoredPlan>> restore_plan(const EngineFile& file);

}  // namespace tensoracle
