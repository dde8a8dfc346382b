// Families "cudnn.conv" and "cudnn.deconv" (conv_families.h) and the registration of every
// convolution family.
#include <cudnn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <string>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cudnn/conv_families.h"
#include "backends/cuda/cudnn/cudnn_conv_graph.h"
#include "backends/cuda/cudnn_check.h"
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

// Everything a prepared graph depends on, for matching a step without allocating.
struct StepShapes {
  std::vector<Dims> shapes;
  std::vector<Layout> layouts;

  static StepShapes of(const StepInstance& step) {
    StepShapes s;
    for (const TensorDesc* in : step.anchor.inputs) s.shapes.push_back(in ? in->shape : Dims());
    for (const TensorDesc& in : step.program.inputs) s.shapes.push_back(in.shape);
    for (const TensorDesc& out : step.outputs) s.shapes.push_back(out.shape);
    s.layouts = step.input_layouts;
    s.layouts.insert(s.layouts.end(), step.output_layouts.begin(), step.output_layouts.end());
    s.layouts.insert(s.layouts.end(), step.extra_input_layouts.begin(), step.extra_input_layouts.end());
    return s;
  }
  bool matches(const StepInstance& step) const {
    size_t i = 0;
    const auto next = [&](const Dims& d) { return i < shapes.size() && shapes[i++] == d; };
    for (const TensorDesc* in : step.anchor.inputs)
      if (!next(in ? in->shape : Dims())) return false;
    for (const TensorDesc& in : step.program.inputs)
      if (!next(in.shape)) return false;
    for (const TensorDesc& out : step.outputs)
      if (!next(out.shape)) return false;
    const size_t ni = step.input_layouts.size(), no = step.output_layouts.size();
    if (i != shapes.size() || layouts.size() != ni + no + step.extra_input_layouts.size()) return false;
    return std::equal(step.input_layouts.begin(), step.input_layouts.end(), layouts.begin()) &&
           std::equal(step.output_layouts.begin(), step.output_layouts.end(), layouts.begin() + ni) &&
           std::equal(step.extra_input_layouts.begin(), step.extra_input_layouts.end(), layouts.begin() + ni + no);
  }
  std::string key() const {
    std::string k;
    for (const Dims& d : shapes) k += d.to_string() + ";";
    for (Layout l : layouts) k += layout_name(l), k += ";";
    return k;
  }
};

// A graph and engine ready to run one step's shapes.
struct Prepared {
  StepShapes shapes;
  ConvProblem problem;
  ConvEpilogue epilogue;
  cudnnContext* handle = nullptr;
  std::shared_ptr<CudnnConvGraph> graph;  // nullptr: the output is empty, nothing to run
  CudnnConvPlan plan;
  std::unordered_map<int64_t, void*> pack;
};

// The step's problem and epilogue, no graph yet.
Result<Prepared> describe(const StepInstance& step, cudnnContext* handle) {
  Prepared p;
  p.shapes = StepShapes::of(step);
  TO_ASSIGN_OR_RETURN(p.problem, conv_problem(step));
  TO_ASSIGN_OR_RETURN(p.epilogue, conv_epilogue(step, p.problem));
  p.handle = handle;
  return p;
}

// Builds the graph for `step` and picks `engine` on it: fused when asked and possible, else the
// plain graph (the epilogue kernel then does bias and epilogue).
Result<Prepared> prepare(const StepInstance& step, bool fused, const std::string& engine, cudnnContext* handle) {
  TO_ASSIGN_OR_RETURN(Prepared p, describe(step, handle));
  if (p.problem.output_elements() == 0) return p;
  fused = fused && needs_epilogue(p.problem, p.epilogue) && cudnn_fuses(p.problem, p.epilogue);
  Status fused_failure = Status::ok();
  if (fused) {
    auto graph = CudnnConvGraph::build(p.problem, p.epilogue, true, handle);
    if (graph.is_ok()) {
      auto plan = (*graph)->plan_for(engine);
      if (plan.is_ok()) {
        p.graph = std::move(graph).value();
        p.plan = std::move(plan).value();
      } else {
        fused_failure = plan.status();
      }
    } else {
      fused_failure = graph.status();
    }
  }
  if (!p.graph) {
    auto graph = CudnnConvGraph::build(p.problem, p.epilogue, false, handle);
    if (!graph.is_ok())
      return graph.status().with_context(fmt::format("layer '{}'{}", step.anchor.node.name,
                                                     fused_failure.is_ok() ? "" : " (fused: " + fused_failure.message() + ")"));
    TO_ASSIGN_OR_RETURN(p.plan, (*graph)->plan_for(fused ? std::string() : engine));
    p.graph = std::move(graph).value();
  }
  p.pack = p.graph->variant_pack();
  return p;
}

class CudnnConvTactic final : public CudaTactic {
 public:
  CudnnConvTactic(OpKind kind, int index, bool fused, std::string engine)
      : kind_(kind), index_(index), fused_(fused), engine_(std::move(engine)) {}

  std::string name() const override { return fmt::format("{}#{}", family_name(kind_), index_); }
  nlohmann::json choice() const override { return {{"plan", index_}, {"fused", fused_}, {"engine", engine_}}; }

  void adopt(Prepared prepared) { active_ = std::make_unique<Prepared>(std::move(prepared)); }

  size_t workspace_size(const StepInstance& step) const override {
    if (active_ && active_->shapes.matches(step)) return active_->graph ? static_cast<size_t>(active_->plan.workspace) : 0;
    const std::string key = StepShapes::of(step).key();
    if (auto it = workspace_at_.find(key); it != workspace_at_.end()) return it->second;
    // Shapes this tactic was not initialized for (a dynamic shape's maximum): plan them on a
    // handle of our own; the bound when that fails (initialize will report why).
    size_t bytes = static_cast<size_t>(kMaxConvWorkspace);
    cudnnHandle_t handle = nullptr;
    if (cudnnCreate(&handle) == CUDNN_STATUS_SUCCESS) {
      {  // the graph goes before its handle
        auto p = prepare(step, fused_, engine_, handle);
        if (p.is_ok()) bytes = p->graph ? static_cast<size_t>(p->plan.workspace) : 0;
      }
      cudnnDestroy(handle);
    }
    workspace_at_[key] = bytes;
    return bytes;
  }

  Status initialize(const StepInstance& step, const RunContext& ctx) override {
    if (active_ && active_->handle == ctx.cudnn && active_->shapes.matches(step)) return Status::ok();
    active_.reset();
    TO_ASSIGN_OR_RETURN(Prepared p, prepare(step, fused_, engine_, ctx.cudnn));
    adopt(std::move(p));
    return Status::ok();
  }

  Status run(const StepInstance& step, const StepBuffers& buffers, const RunContext& ctx) override {
    if (!active_ || active_->handle != ctx.cudnn || !active_->shapes.matches(step))
      return make_error(StatusCode::kFailedPrecondition, "layer '{}': {} runs before initialize() for these shapes",
                        step.anchor.node.name, name());
    Prepared& p = *active_;
    if (!p.graph) return Status::ok();
    TO_RETURN_IF_ERROR(check_buffer_layouts(step, p.problem, p.epilogue, buffers));
    TO_RETURN_IF_ERROR(p.graph->execute(p.plan, buffers, p.pack, ctx.cudnn, ctx.stream));
    if (!p.graph->fused() && needs_epilogue(p.problem, p.epilogue)) {
      const EpilogueLaunch e = epilogue_launch(p.problem, p.epilogue, buffers, true);
      const auto shape = p.problem.y_shape5();
      const auto strides = p.problem.y_strides();
      TO_CUDA_RETURN_IF_ERROR(launch_conv_epilogue(conv_element(p.problem.dtype), shape.data(), buffers.outputs.at(0).data,
                                                   strides.data(), e, ctx.stream));
    }
    return Status::ok();
  }

 private:
  OpKind kind_;
  int index_;
  bool fused_;
  std::string engine_;
  std::unique_ptr<Prepared> active_;
  mutable std::map<std::string, size_t> workspace_at_;
};

class CudnnConvFamily final : public TacticFamily {
 public:
  explicit CudnnConvFamily(OpKind kind) : kind_(kind) {}
  std::string name() const override { return family_name(kind_); }

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

  Result<std::vector<std::unique_ptr<CudaTactic>>> candidates(const StepInstance& step, const RunContext& ctx,
                                                              int limit) const override {
    limit = std::max(limit, 1);
    std::vector<std::unique_ptr<CudaTactic>> out;
    TO_ASSIGN_OR_RETURN(Prepared base, describe(step, ctx.cudnn));
    if (base.problem.output_elements() == 0) {
      auto tactic = std::make_unique<CudnnConvTactic>(kind_, 0, false, "");
      tactic->adopt(std::move(base));
      out.push_back(std::move(tactic));
      return out;
    }
    std::vector<std::string> failures;
    for (const bool fused : {true, false}) {
      if (fused && (!needs_epilogue(base.problem, base.epilogue) || !cudnn_fuses(base.problem, base.epilogue))) continue;
      const int room = limit - static_cast<int>(out.size());
      if (room <= 0) break;
      auto graph = CudnnConvGraph::build(base.problem, base.epilogue, fused, ctx.cudnn);
      auto plans = graph.is_ok() ? (*graph)->plans(room) : Result<std::vector<CudnnConvPlan>>(graph.status());
      if (!plans.is_ok()) {
        failures.push_back(fmt::format("{}: {}", fused ? "fused" : "plain", plans.status().message()));
        continue;
      }
      for (CudnnConvPlan& plan : *plans) {
        const int index = static_cast<int>(out.size());
        auto tactic = std::make_unique<CudnnConvTactic>(kind_, index, fused, plan.engine);
        Prepared p;
        p.shapes = base.shapes;
        p.problem = base.problem;
        p.epilogue = base.epilogue;
        p.handle = ctx.cudnn;
        p.graph = *graph;
        p.plan = std::move(plan);
        p.pack = p.graph->variant_pack();
        tactic->adopt(std::move(p));
        out.push_back(std::move(tactic));
      }
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
    return std::unique_ptr<CudaTactic>(std::make_unique<CudnnConvTactic>(kind_, plan->get<int>(), fused->get<bool>(),
                                                                        engine->get<std::string>()));
  }

 private:
  OpKind kind_;
};

}  // namespace

std::shared_ptr<const TacticFamily> make_cudnn_conv_family(OpKind kind) { return std::make_shared<CudnnConvFamily>(kind); }

void add_cudnn_conv_families(FamilyTable& table) {
  for (OpKind kind : {OpKind::kConvolution, OpKind::kDeconvolution}) {
    table.add(kind, make_cudnn_conv_family(kind));
    table.add(kind, make_direct_conv_family());
  }
}

}  // namespace tensoracle::backends::cuda
