// The interface every backend implements: the one place where a network becomes an engine plan
// and an engine plan becomes something that runs. The registry (registry.h) lists the backends of
// a build; nothing outside src/backends/ knows any backend by name.
//
//   TO_ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, create_backend("cpu"));  // needs no device
//   for (size_t i = 0; i < network.num_nodes(); ++i)
//     TO_RETURN_IF_ERROR(backend->supports(network, i));                          // why not, per layer
//   TO_ASSIGN_OR_RETURN(BackendPlan plan, backend->plan(PlanRequest{network, profiles, settings}));
//   ... the builder (src/build/) stores plan.json and plan.blobs in an engine file ...
//   // Engine::from_file: the engine layer checks the file's sections against each other first
//   // (engine/engine_validation.h), then the backend restores the plan it built.
//   TO_ASSIGN_OR_RETURN(std::shared_ptr<const RestoredPlan> restored, backend->restore(engine_file, checked_plan));
//   TO_ASSIGN_OR_RETURN(std::unique_ptr<ExecutionBackend> execution, restored->create_execution());
//
// Creating a backend never needs its device, so listing, probing and error messages work on any
// machine; what needs the device (plan, restore, execute) fails with kFailedPrecondition naming
// why, as usable() does. docs/backends.md says how to add a backend.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "tensoracle/array.h"
#include "tensoracle/builder_settings.h"
#include "tensoracle/engine_file.h"
#include "tensoracle/environment.h"
#include "tensoracle/layer_timing.h"
#include "tensoracle/network.h"
#include "tensoracle/status.h"

namespace tensoracle::backends {

// One node with concrete (static) input and output shapes.
struct NodeInstance {
  const Node& node;
  std::vector<const TensorDesc*> inputs;  // nullptr: omitted optional input
  std::vector<TensorDesc> outputs;
};

// What a backend plans an engine from. The builder has defined the network and checked the
// declared inputs against it; the backend runs its own passes.
struct PlanRequest {
  const Network& network;
  // One or more; each names every network input. Plans are sized for all of them.
  const std::vector<OptimizationProfile>& profiles;
  const BuilderSettings& settings;
  BuildProgressFn progress = nullptr;  // may be empty
  // With settings.deterministic_replay: the engine file whose recorded choices to replay (built by
  // this backend; the builder has checked that). nullptr otherwise.
  const EngineFile* tactic_record = nullptr;
};

// A weight blob the plan refers to by name; `owner` keeps `view` alive.
struct PlanBlob {
  std::string name;
  ArrayView view;
  std::shared_ptr<const void> owner;
};

// A backend's plan: the engine file's plan section (JSON whose layout the backend owns and
// documents, with its build log where it keeps one) and the weight blobs it names.
struct BackendPlan {
  std::string json;
  std::vector<PlanBlob> blobs;
};

// An engine's plan as the engine layer checked it before any backend sees it
// (engine/engine_validation.h): the plan section parsed by the strict JSON reader, and the
// network every plan carries (plan_network.h), rebuilt with its constants borrowing the engine's
// blobs, checked against the I/O table and bounded (every dim, attribute and tensor size, the
// activation memory). What only the backend understands (its per-layer fields, tactic choices,
// memory plan, streams) is the backend's to check.
struct CheckedPlan {
  nlohmann::json json;
  std::shared_ptr<const Network> network;
};

// One Execution's state: used by one thread at a time. Shapes arrive checked against the
// profile; buffers are in the backend's memory.
//
// Input shapes are set one input at a time (Execution::set_input_shape), so output_shapes sees
// combinations the caller is only passing through: [1,64] for x while b is still at [8,64]. It
// therefore runs the network's shape inference only and configures nothing (no tactic, no
// plugin's configure, which may check one input against another); the calls that run the engine
// (enqueue, run_on_host, profile_layers) get the input shapes and configure the steps for them
// when they changed, reporting configuration errors there.
class ExecutionBackend {
 public:
  virtual ~ExecutionBackend() = default;
  // Output shapes (by name) for the given input shapes (by name): shape inference only.
  virtual Result<std::map<std::string, Dims>> output_shapes(const std::map<std::string, Dims>& input_shapes) = 0;
  // Runs with every input and output bound; `output_shapes` is what output_shapes returned.
  virtual Status enqueue(const std::map<std::string, Dims>& input_shapes, const std::map<std::string, void*>& bindings,
                         const std::map<std::string, Dims>& output_shapes, void* stream) = 0;
  // Runs on host arrays (Execution::run_on_host): stages them in and the outputs out.
  virtual Result<NamedArrays> run_on_host(const std::map<std::string, Dims>& input_shapes, const NamedArrayViews& inputs,
                                          const std::map<std::string, Dims>& output_shapes, const IoTable& io) = 0;
  // Whether the last enqueue replayed a CUDA graph (Execution::last_enqueue_used_graph).
  virtual bool last_enqueue_used_graph() const { return false; }
  // Per-layer times on the bound buffers (Execution::profile_layers); kUnsupported by default.
  virtual Result<std::vector<LayerTiming>> profile_layers(const std::map<std::string, Dims>& input_shapes,
                                                          const std::map<std::string, void*>& bindings, void* stream,
                                                          int iterations);
};

// A plan restored from an engine file: shared (immutable) by every Execution of an Engine.
class RestoredPlan {
 public:
  virtual ~RestoredPlan() = default;
  virtual Result<std::unique_ptr<ExecutionBackend>> create_execution() const = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  // The registry name, recorded in every engine this backend builds (Environment::backend).
  virtual std::string_view name() const = 0;
  // Ok, or kFailedPrecondition naming why this process cannot run the backend (no GPU).
  virtual Status usable() const = 0;
  // Ok, or why node `index` of `network` cannot run on this backend (kUnsupported with a reason
  // naming the layer; a plugin layer whose plugin network.plugins() lacks: kNotFound naming the
  // plugin, and a plugin's own errors as it reported them). Needs no device.
  virtual Status supports(const Network& network, size_t index) const = 0;
  // Plans an engine: lowering, tactic choice (timed or replayed), memory.
  virtual Result<BackendPlan> plan(const PlanRequest& request) const = 0;
  // Checks what only this backend understands in `plan` (of `file`, an engine it built whose
  // sections the engine layer has checked against each other): every name, offset, size and
  // choice the backend's own fields hold. Needs no device (`cache verify` runs it anywhere);
  // errors are kCorruptData naming the field.
  virtual Status check_plan(const EngineFile& file, const CheckedPlan& plan) const = 0;
  // Restores `plan` for execution: check_plan's checks, then the device side (constants
  // uploaded, tactics replayed).
  virtual Result<std::shared_ptr<const RestoredPlan>> restore(const EngineFile& file, const CheckedPlan& plan) const = 0;
  // Fills the backend's part of `environment` (the rest is filled by probe_environment): for a
  // GPU backend the device and library versions, or cuda_unavailable_reason saying why they are
  // absent. Never fails: an absent device is a fact of the environment.
  virtual void probe(Environment& environment) const = 0;
  // Runs `network` on host inputs (by input name; concrete shapes resolve dynamic dims) and
  // returns every marked output by name, in its tensor's type: the op harness and the examples
  // compare backends with the CPU reference this way. One call at a time per Backend object (a
  // backend may cache per-network state such as converted constants); use one object per thread.
  virtual Result<NamedArrays> execute(const Network& network, const NamedArrayViews& inputs) = 0;
};

}  // namespace tensoracle::backends
