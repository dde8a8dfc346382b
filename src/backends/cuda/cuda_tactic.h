// How the CUDA backend implements a step (step.h): tactic families, one or more per layer kind,
// each offering concrete candidates the builder times; the winner's name and choice are recorded
// in the engine so a rebuild or a reload replays it exactly (deterministic replay).
//
// Follows CUTLASS's operation shape: can_implement (with a reason) -> workspace_size ->
// initialize -> run(stream). initialize may allocate, build library plans and synchronize; run
// is the hot path of enqueue: it only launches work on ctx.stream (no allocation, no host
// synchronization, no logging), so it can be captured into a CUDA graph.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backends/cuda/run_context.h"
#include "backends/cuda/step.h"

namespace tensoracle::backends::cuda {

class CudaTactic {
 public:
  virtual ~CudaTactic() = default;
  // "<family>" or "<family>#<variant>", e.g. "cublaslt.matmul#algo3"; shown by inspect.
  virtual std::string name() const = 0;
  // What replays exactly this candidate (TacticFamily::replay); an empty object when nothing.
  virtual nlohmann::json choice() const { return nlohmann::json::object(); }
  // Device scratch memory run() needs for `step` (the runtime provides it; no allocation in run).
  virtual size_t workspace_size(const StepInstance&) const { return 0; }
  // Prepares for the step's concrete shapes. Called again when shapes change.
  virtual Status initialize(const StepInstance&, const RunContext&) { return Status::ok(); }
  // After initialize, before the first run and outside any stream capture, once the step's
  // constant inputs hold their values (Runtime::prepare; the tactic timer before it runs a
  // candidate): work that depends on the constants alone, done once instead of at every run.
  // `buffers` binds the constants and the engine's own tensors; network inputs and outputs may be
  // unbound (null). Work may be queued on ctx.stream; the caller synchronizes before any run.
  virtual Status prepare_constants(const StepInstance&, const StepBuffers&, const RunContext&) { return Status::ok(); }
  virtual Status run(const StepInstance& step, const StepBuffers& buffers, const RunContext& ctx) = 0;
  // A tactic of a step that fuses quantize/dequantize layers (StepInstance::fuses_quantization)
  // that runs them as they would run unfused, kernels around a plain product: the build log
  // names the step when the timer chooses it (tactic_timer.h explicit_quantization_note).
  virtual bool runs_quantization_explicitly() const { return false; }
};

// What a family tells the planner about a layer before any step exists. The planner proposes
// only what some family of the layer's kind declares (FamilyTable::traits merges them):
// plan_lowering.h asks `epilogue`, plan_layouts.h the nhwc fields, plan_views.h the bshd ones.
// can_implement still judges every concrete step; a refusal there leaves the fusion shorter or
// the tensors linear.
struct FamilyTraits {
  // Fuses the chain of pointwise layers that alone read the layer's output into its step
  // (StepInstance::program): an epilogue, or for a pointwise layer the rest of its chain.
  bool epilogue = false;
  // Computes the dequantize layers that alone produce its operands and a quantize layer after its
  // epilogue (step.h: StepInstance::dequantized, requantize): Q/DQ fusion.
  bool quantize_fusion = false;
  // Writes, as a second output, a per-tensor quantize of its output that other layers read too
  // (step.h: FusedQuantization::copy): the quantize layer is not a step of its own.
  bool quantized_copy = false;
  // Reads and writes rank-4 tensors channels-last (Layout::kNhwc).
  bool nhwc = false;
  // Runs faster channels-last (tensor-core convolutions): a tensor goes nhwc only when a layer
  // that prefers it writes or reads it and every other step touching it takes nhwc.
  bool prefers_nhwc = false;
  // Inputs, by index, that when constant are stored channels-last once input 0 is (a
  // convolution's weight [K, C/G, R, S] as KRSC, reordered when the engine loads).
  std::vector<size_t> nhwc_constant_inputs;
  // Inputs, by index, it reads in Layout::kBshd, and whether it writes output 0 so: the head
  // transposes (0, 2, 1, 3) next to it become views (attention on cuDNN SDPA: q, k, v, output).
  std::vector<size_t> bshd_inputs;
  bool bshd_output = false;

  // A family of Q/DQ-fused products: an epilogue and the quantize/dequantize layers around it.
  static FamilyTraits quantized_product() {
    FamilyTraits t;
    t.epilogue = true;
    t.quantize_fusion = true;
    return t;
  }

  // Adds everything `other` declares.
  void merge(const FamilyTraits& other);
  // Whether these traits declare every kind of quantize/dequantize layer `step` computes: a
  // family is asked about such a step, or given one by a plan, only then.
  bool covers_quantization_of(const StepInstance& step) const;
};

class TacticFamily {
 public:
  virtual ~TacticFamily() = default;
  virtual std::string name() const = 0;  // the family name recorded in plans
  // ok, or why this family cannot implement `step` on `device` (kUnsupported with a reason):
  // types, layouts, ranks, attributes, the epilogue it would have to fuse.
  virtual Status can_implement(const StepInstance& step, const DeviceInfo& device) const = 0;
  // Candidates to time for `step`, the family's best guess first, at most `limit` (>= 1).
  virtual Result<std::vector<std::unique_ptr<CudaTactic>>> candidates(const StepInstance& step, const RunContext& ctx,
                                                                      int limit) const = 0;
  // The candidate a plan recorded (`choice` is what CudaTactic::choice returned).
  virtual Result<std::unique_ptr<CudaTactic>> replay(const StepInstance& step, const nlohmann::json& choice) const = 0;
  // True for a family of our own straightforward kernels, tested against the CPU backend: the
  // tactic timer checks every candidate's output against its candidate's, so that a library
  // engine giving wrong results is rejected even when it is the heuristics' first choice.
  virtual bool is_reference() const { return false; }
  // What the planner may propose to this family for `node`; by default nothing: no epilogue,
  // linear tensors only.
  virtual FamilyTraits traits(const Node&) const { return {}; }
};

// Every family compiled in, by the anchor kind it implements, in preference order (op_families.h
// lists them).
class FamilyTable {
 public:
  void add(OpKind kind, std::shared_ptr<const TacticFamily> family);
  const std::vector<std::shared_ptr<const TacticFamily>>& for_kind(OpKind kind) const;
  const TacticFamily* find(const std::string& name) const;
  // The traits of every family of the node's kind, merged.
  FamilyTraits traits(const Node& node) const;

 private:
  std::map<OpKind, std::vector<std::shared_ptr<const TacticFamily>>> by_kind_;
};

const FamilyTable& tactic_families();

}  // namespace tensoracle::backends::cuda
