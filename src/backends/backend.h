// The interface every backend implements (DESIGN.md "Backends").
//
// A backend says which nodes it supports (and why not), lowers each node to candidate tactics
// (the builder times them and records the choice), and can run a whole network on host arrays,
// which is what the op-test harness and the examples use to compare backends with the CPU
// reference. Tactic follows CUTLASS's operation shape: can_implement -> workspace_size ->
// initialize -> run(stream).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tensoracle/array.h"
#include "tensoracle/network.h"
#include "tensoracle/status.h"

namespace tensoracle::backends {

// One node with concrete (static) input and output shapes.
struct NodeInstance {
  const Node& node;
  std::vector<const TensorDesc*> inputs;  // nullptr: omitted optional input
  std::vector<TensorDesc> outputs;
};

class Tactic {
 public:
  virtual ~Tactic() = default;
  virtual std::string name() const = 0;
  // ok, or why this tactic cannot run `node` (kUnsupported with a reason).
  virtual Status can_implement(const NodeInstance& node) const = 0;
  virtual size_t workspace_size(const NodeInstance&) const { return 0; }
  virtual Status initialize(const NodeInstance&) { return Status::ok(); }
  // Buffers are in the backend's storage format for each tensor (documented by the backend);
  // inputs[i] is nullptr for an omitted optional input. `stream` is backend-specific.
  virtual Status run(const NodeInstance& node, const std::vector<const void*>& inputs,
                     const std::vector<void*>& outputs, void* workspace, void* stream) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // ok, or why node `index` of `network` cannot run on this backend.
  virtual Status supports(const Network& network, size_t index) const = 0;
  // Candidate implementations of node `index`, in preference order (empty if unsupported).
  virtual std::vector<std::unique_ptr<Tactic>> tactics(const Network& network, size_t index) const = 0;
  // Runs `network` on host inputs (by input name; concrete shapes resolve dynamic dims) and
  // returns every marked output by name, in its tensor's type. One call at a time per Backend
  // object (a backend may cache per-network state such as converted constants); use one object
  // per thread.
  virtual Result<NamedArrays> execute(const Network& network, const NamedArrayViews& inputs) = 0;
};

// The registry: every backend compiled into this build ("cpu" always first). Creating one can
// fail where it cannot run (the cuda backend without a GPU: kFailedPrecondition with the reason).
std::vector<std::string> backend_names();
Result<std::unique_ptr<Backend>> create_backend(std::string_view name);

}  // namespace tensoracle::backends
