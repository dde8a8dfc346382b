// Families "cudnn.conv" and "cudnn.deconv" (conv_families.h).
#include <cudnn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cudnn/conv_families.h"
#include "backends/cuda/cudnn/conv_pad_channels.h"
#include "backends/cuda/cudnn/cudnn_conv_graph.h"
#include "backends/cuda/cudnn_check.h"
#include "backends/cuda/step_shapes.h"
#include "core/errors.h"

namespace tensoracle::backends::cuda {

namespace {

const char* family_name(OpKind kind) { return kind == OpKind::kDeconvolution ? "cudnn.deconv" : "cudnn.conv"; }

bool needs_epilogue(const ConvProblem& p, const ConvEpilogue& e) { return p.has_bias || !e.empty(); }

// Whether cuDNN may fuse the epilogue. On the H200 (cuDNN 9.14) the runtime-fusion engine gave
// wrong fp16/bf16 results (relative L2 ~1) for fused sigmoid, tanh, silu and gelu, while bias,
// add, mul and relu were right (gpu_conv_test, docs/perf/gpu-log.md); those chains run the plain
// convolution followed by tensoracle's epilogue kernel instead.
bool cudnn_fuses(const ConvProblem& p, const ConvEpilogue& e) {
  if (p.dtype == DataType::kFloat32) return true;
  for (const ConvEpilogueOp& op : e.ops)
    if (op.kind != EpilogueOpKind::kAddTensor && op.kind != EpilogueOpKind::kMulTensor && op.kind != EpilogueOpKind::kRelu)
      return false;
  return true;
}

// cuDNN wants aligned pointers: each part of a padded candidate's workspace starts on this.
constexpr size_t kWorkspaceAlignment = 256;

size_t align_up(size_t bytes) { return (bytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment; }

// A padded candidate's workspace: the padded x, then the padded w, then the engine's workspace.
struct PaddedWorkspace {
  size_t x_bytes = 0, w_bytes = 0;  // each rounded up to kWorkspaceAlignment

  static Result<PaddedWorkspace> of(const ConvProblem& padded) {
    TO_ASSIGN_OR_RETURN(const int64_t x, padded.x_shape.byte_size(padded.dtype));
    TO_ASSIGN_OR_RETURN(const int64_t w, padded.w_shape.byte_size(padded.dtype));
    return PaddedWorkspace{align_up(static_cast<size_t>(x)), align_up(static_cast<size_t>(w))};
  }
  size_t engine_offset() const { return x_bytes + w_bytes; }
};

// A graph and engine ready to run one step's shapes.
struct Prepared {
  StepShapes shapes;
  ConvProblem problem;        // the step's convolution
  ConvProblem graph_problem;  // what the graph convolves: `problem`, or its channel-padded form
  int64_t pad_channels = 0;   // 0: x and w as the step gives them; else C is padded to a multiple of this
  PaddedWorkspace padded;     // pad_channels != 0: where the padded copies live in the workspace
  PadChannelsLaunch pad;      // pad_channels != 0: the padding copy, every pointer still null
  ConvEpilogue epilogue;
  cudnnContext* handle = nullptr;
  std::shared_ptr<CudnnConvGraph> graph;  // nullptr: the output is empty, nothing to run
  CudnnConvPlan plan;
  std::unordered_map<int64_t, void*> pack;

  size_t workspace_size() const {
    if (!graph) return 0;
    return (pad_channels ? padded.engine_offset() : 0) + static_cast<size_t>(plan.workspace);
  }
};

// Makes `p` (unpadded so far) a channel-padded one: the graph's problem, the workspace parts and
// the padding copy's geometry (computed here so that run() only fills in pointers).
Status make_padded(Prepared& p, int64_t multiple) {
  TO_RETURN_IF_ERROR(pad_channels_applicable(p.problem));
  p.pad_channels = multiple;
  p.graph_problem = with_padded_channels(p.problem, multiple);
  TO_ASSIGN_OR_RETURN(p.padded, PaddedWorkspace::of(p.graph_problem));
  p.pad = pad_channels_launch(p.problem, multiple);
  return Status::ok();
}

// The step's problem and epilogue, no graph yet; its channels padded to a multiple of
// `pad_multiple` when that is not 0.
Result<Prepared> describe(const StepInstance& step, int64_t pad_multiple, cudnnContext* handle) {
  Prepared p;
  p.shapes = StepShapes::of(step);
  TO_ASSIGN_OR_RETURN(p.problem, conv_problem(step));
  TO_ASSIGN_OR_RETURN(p.epilogue, conv_epilogue(step, p.problem));
  p.graph_problem = p.problem;
  if (pad_multiple != 0 && p.problem.output_elements() != 0)
    TO_RETURN_IF_ERROR(make_padded(p, pad_multiple).with_context(fmt::format("layer '{}'", step.anchor.node.name)));
  p.handle = handle;
  return p;
}

// Builds the graph for `step` and picks `engine` on it: fused when asked and possible, else the
// plain graph (the epilogue kernel then does bias and epilogue); within `max_workspace` bytes in
// all (the padded copies' part included), another engine when `engine` needs more at these shapes.
Result<Prepared> prepare(const StepInstance& step, bool fused, const std::string& engine, int64_t pad_channels,
                         cudnnContext* handle, size_t max_workspace = SIZE_MAX) {
  TO_ASSIGN_OR_RETURN(Prepared p, describe(step, pad_channels, handle));
  if (p.problem.output_elements() == 0) return p;
  const size_t copies = p.pad_channels ? p.padded.engine_offset() : 0;
  if (copies > max_workspace)
    return invalid_argument("layer '{}': the channel-padded copies need {} bytes of workspace, {} given",
                            step.anchor.node.name, copies, max_workspace);
  const int64_t engine_workspace =
      static_cast<int64_t>(std::min<size_t>(max_workspace - copies, static_cast<size_t>(kMaxConvWorkspace)));
  fused = fused && needs_epilogue(p.problem, p.epilogue) && cudnn_fuses(p.problem, p.epilogue);
  Status fused_failure = Status::ok();
  if (fused) {
    auto graph = CudnnConvGraph::build(p.graph_problem, p.epilogue, true, handle);
    if (graph.is_ok()) {
      auto plan = (*graph)->plan_for(engine, engine_workspace);
      if (plan.is_ok()) {
        p.graph = *std::move(graph);
        p.plan = *std::move(plan);
      } else {
        fused_failure = plan.status();
      }
    } else {
      fused_failure = graph.status();
    }
  }
  if (!p.graph) {
    auto graph = CudnnConvGraph::build(p.graph_problem, p.epilogue, false, handle);
    if (!graph.is_ok())
      return graph.status().with_context(fmt::format("layer '{}'{}", step.anchor.node.name,
                                                     fused_failure.is_ok() ? "" : " (fused: " + fused_failure.message() + ")"));
    TO_ASSIGN_OR_RETURN(p.plan, (*graph)->plan_for(fused ? std::string() : engine, engine_workspace));
    p.graph = *std::move(graph);
  }
  p.pack = p.graph->variant_pack();
  return p;
}

class CudnnConvTactic final : public CudaTactic {
 public:
  CudnnConvTactic(OpKind kind, int index, bool fused, std::string engine, int64_t pad_channels)
      : kind_(kind), index_(index), fused_(fused), engine_(std::move(engine)), pad_channels_(pad_channels) {}

  std::string name() const override {
    return pad_channels_ ? fmt::format("{}#{}+pad{}", family_name(kind_), index_, pad_channels_)
                         : fmt::format("{}#{}", family_name(kind_), index_);
  }
  nlohmann::json choice() const override {
    nlohmann::json c{{"plan", index_}, {"fused", fused_}, {"engine", engine_}};
    if (pad_channels_) c["pad_channels"] = pad_channels_;
    return c;
  }

  void adopt(Prepared prepared) { active_ = std::make_unique<Prepared>(std::move(prepared)); }

  size_t workspace_size(const StepInstance& step) const override {
    if (active_ && active_->shapes.matches(step)) return active_->workspace_size();
    const std::string key = StepShapes::of(step).key();
    if (auto it = workspace_at_.find(key); it != workspace_at_.end()) return it->second;
    // Shapes this tactic was not initialized for (a dynamic shape's maximum): plan them on a
    // handle of our own; the bound when that fails (initialize will report why).
    size_t bytes = static_cast<size_t>(kMaxConvWorkspace);
    cudnnHandle_t handle = nullptr;
    if (cudnnCreate(&handle) == CUDNN_STATUS_SUCCESS) {
      {  // the graph goes before its handle
        auto p = prepare(step, fused_, engine_, pad_channels_, handle);
        if (p.is_ok()) bytes = p->workspace_size();
      }
      cudnnDestroy(handle);
    }
    workspace_at_[key] = bytes;
    return bytes;
  }

  Status initialize(const StepInstance& step, const RunContext& ctx) override {
    if (active_ && active_->handle == ctx.cudnn && active_->shapes.matches(step) &&
        active_->workspace_size() <= ctx.workspace_bytes)
      return Status::ok();
    active_.reset();
    TO_ASSIGN_OR_RETURN(Prepared p, prepare(step, fused_, engine_, pad_channels_, ctx.cudnn, ctx.workspace_bytes));
    adopt(std::move(p));
    return Status::ok();
  }

  Status run(const StepInstance& step, const StepBuffers& buffers, const RunContext& ctx) override {
    if (!active_ || active_->handle != ctx.cudnn || !active_->shapes.matches(step)) return not_prepared_for(step, name());
    Prepared& p = *active_;
    if (!p.graph) return Status::ok();
    TO_RETURN_IF_ERROR(check_buffer_layouts(step, p.problem, p.epilogue, buffers));  // every buffer is there
    CudnnConvOperands operands = CudnnConvOperands::of(buffers);
    if (p.pad_channels) TO_RETURN_IF_ERROR(pad_operands(step, p, buffers, ctx.stream, operands));
    TO_RETURN_IF_ERROR(p.graph->execute(p.plan, operands, buffers, p.pack, ctx.cudnn, ctx.stream));
    if (!p.graph->fused() && needs_epilogue(p.problem, p.epilogue)) {
      const EpilogueLaunch e = epilogue_launch(p.problem, p.epilogue, buffers, true);
      const auto shape = p.problem.y_shape5();
      const auto strides = p.problem.y_strides();
      TO_CUDA_RETURN_IF_ERROR(launch_conv_epilogue(conv_element(p.problem.dtype), shape.data(), buffers.outputs[0].data,
                                                   strides.data(), e, ctx.stream));
    }
    return Status::ok();
  }

 private:
  // Writes the padded x and w to the front of the workspace and points `operands` at them and at
  // the engine's part of the workspace.
  Status pad_operands(const StepInstance& step, const Prepared& p, const StepBuffers& buffers, cudaStream_t stream,
                      CudnnConvOperands& operands) const {
    char* workspace = static_cast<char*>(buffers.workspace);
    if (workspace == nullptr || reinterpret_cast<uintptr_t>(workspace) % kWorkspaceAlignment != 0 ||
        buffers.workspace_bytes < p.workspace_size())
      return make_error(StatusCode::kFailedPrecondition,
                        "layer '{}': {} needs {} bytes of workspace aligned to {} bytes, {} given at {}",
                        step.anchor.node.name, name(), p.workspace_size(), kWorkspaceAlignment, buffers.workspace_bytes,
                        static_cast<const void*>(workspace));
    PadChannelsLaunch launch = p.pad;
    launch.x.data = buffers.inputs[0].data;
    launch.x.padded = workspace;
    launch.w.data = buffers.inputs[1].data;
    launch.w.padded = workspace + p.padded.x_bytes;
    TO_CUDA_RETURN_IF_ERROR(launch_pad_channels(launch, stream));
    operands.x = launch.x.padded;
    operands.w = launch.w.padded;
    operands.workspace = workspace + p.padded.engine_offset();
    operands.workspace_bytes = buffers.workspace_bytes - p.padded.engine_offset();
    return Status::ok();
  }

  OpKind kind_;
  int index_;
  bool fused_;
  std::string engine_;
  int64_t pad_channels_;  // 0: unpadded
  std::unique_ptr<Prepared> active_;
  mutable std::map<std::string, size_t> workspace_at_;
};

class CudnnConvFamily final : public TacticFamily {
 public:
  explicit CudnnConvFamily(OpKind kind) : kind_(kind) {}
  std::string name() const override { return family_name(kind_); }
  // Tensor-core engines read fp16/bf16 convolutions fastest channels-last.
  FamilyTraits traits(const Node& node) const override {
    FamilyTraits t = conv_traits(node);
    t.prefers_nhwc = t.nhwc;
    return t;
  }

  Status can_implement(const StepInstance& step, const DeviceInfo& device) const override {
    if (step.anchor.node.kind != kind_)
      return unsupported("layer '{}': {} implements {} layers only", step.anchor.node.name, name(), op_kind_name(kind_));
    TO_ASSIGN_OR_RETURN(const ConvProblem problem, conv_problem(step));
    TO_RETURN_IF_ERROR(conv_epilogue(step, problem).status());
    if (problem.dtype == DataType::kBFloat16 && device.compute_capability() < 80)
      return unsupported("layer '{}': bf16 needs compute capability 8.0+, this GPU is {}.{}", step.anchor.node.name,
                         device.cc_major, device.cc_minor);
    if (problem.output_elements() == 0) return Status::ok();
    if (Status s = cudnn_conv_expressible(problem); !s.is_ok())
      return unsupported("layer '{}': cuDNN cannot express it: {}", step.anchor.node.name, s.message());
    return Status::ok();
  }

  // The unpadded candidates, then, for few input channels (pad_channels_applicable), padded
  // ones: these get at least half of `limit` (none at limit 1, which keeps the unpadded best guess).
  Result<std::vector<std::unique_ptr<CudaTactic>>> candidates(const StepInstance& step, const RunContext& ctx,
                                                              int limit) const override {
    limit = std::max(limit, 1);
    std::vector<std::unique_ptr<CudaTactic>> out;
    TO_ASSIGN_OR_RETURN(Prepared base, describe(step, 0, ctx.cudnn));
    if (base.problem.output_elements() == 0) {
      auto tactic = std::make_unique<CudnnConvTactic>(kind_, 0, false, "", 0);
      tactic->adopt(std::move(base));
      out.push_back(std::move(tactic));
      return out;
    }
    std::vector<std::string> failures;
    const bool pad = pad_channels_applicable(base.problem).is_ok();
    offer(base, pad ? limit - limit / 2 : limit, ctx, out, failures);
    if (pad && static_cast<int>(out.size()) < limit) {
      Prepared padded = base;
      if (Status s = make_padded(padded, kPadChannelsTo); s.is_ok())
        offer(padded, limit - static_cast<int>(out.size()), ctx, out, failures);
      else
        failures.push_back(fmt::format("padded: {}", s.message()));
    }
    if (out.empty())
      return unsupported("layer '{}': no cuDNN engine implements it: {}", step.anchor.node.name, fmt::join(failures, "; "));
    return out;
  }

  Result<std::unique_ptr<CudaTactic>> replay(const StepInstance& step, const nlohmann::json& choice) const override {
    const auto plan = choice.find("plan"), fused = choice.find("fused"), engine = choice.find("engine");
    if (!choice.is_object() || plan == choice.end() || !plan->is_number_integer() || plan->get<int64_t>() < 0 ||
        fused == choice.end() || !fused->is_boolean() || engine == choice.end() || !engine->is_string())
      return invalid_argument("layer '{}': {} choice {} needs \"plan\" (an index >= 0), \"fused\" (a boolean) and "
                              "\"engine\" (a string)",
                              step.anchor.node.name, name(), choice.dump());
    int64_t pad_channels = 0;  // absent in choices recorded before padded candidates existed
    if (const auto pad = choice.find("pad_channels"); pad != choice.end()) {
      if (!pad->is_number_integer() || pad->get<int64_t>() != kPadChannelsTo)
        return invalid_argument("layer '{}': {} choice {}: \"pad_channels\" must be {}", step.anchor.node.name, name(),
                                choice.dump(), kPadChannelsTo);
      pad_channels = kPadChannelsTo;
    }
    return std::unique_ptr<CudaTactic>(std::make_unique<CudnnConvTactic>(kind_, plan->get<int>(), fused->get<bool>(),
                                                                        engine->get<std::string>(), pad_channels));
  }

 private:
  // Appends candidates for `base`'s graph problem (its pad_channels recorded in each), fused
  // graphs first, at most `room`; the reason into `failures` where a graph offers none.
  void offer(const Prepared& base, int room, const RunContext& ctx, std::vector<std::unique_ptr<CudaTactic>>& out,
             std::vector<std::string>& failures) const {
    const std::string what = base.pad_channels ? fmt::format(" (channels padded to {})", base.graph_problem.c) : "";
    const size_t end = out.size() + static_cast<size_t>(std::max(room, 0));
    for (const bool fused : {true, false}) {
      if (fused && (!needs_epilogue(base.problem, base.epilogue) || !cudnn_fuses(base.problem, base.epilogue))) continue;
      if (out.size() >= end) break;
      auto graph = CudnnConvGraph::build(base.graph_problem, base.epilogue, fused, ctx.cudnn);
      auto plans = graph.is_ok() ? (*graph)->plans(static_cast<int>(end - out.size()))
                                 : Result<std::vector<CudnnConvPlan>>(graph.status());
      if (!plans.is_ok()) {
        failures.push_back(fmt::format("{}{}: {}", fused ? "fused" : "plain", what, plans.status().message()));
        continue;
      }
      for (CudnnConvPlan& plan : *plans) {
        auto tactic = std::make_unique<CudnnConvTactic>(kind_, static_cast<int>(out.size()), fused, plan.engine,
                                                        base.pad_channels);
        Prepared p = base;
        p.graph = *graph;
        p.plan = std::move(plan);
        p.pack = p.graph->variant_pack();
        tactic->adopt(std::move(p));
        out.push_back(std::move(tactic));
      }
    }
  }

  OpKind kind_;
};

}  // namespace

std::shared_ptr<const TacticFamily> make_cudnn_conv_family(OpKind kind) { return std::make_shared<CudnnConvFamily>(kind); }

}  // namespace tensoracle::backends::cuda
