// "cudnn.sdpa": cuDNN's fused flash attention through the cudnn-frontend graph API.
//
// The step is viewed as cuDNN's [B, H, L, D]: H is the output's last batch dim, B the product of
// the others (rank 2: B = H = 1). q must fill every batch dim; k and v must match q's B and have
// H heads or one (multi-query attention, which cuDNN's grouped-query support covers). An additive
// mask becomes cuDNN's bias: read through its own strides when cuDNN accepts them, otherwise
// written out as a dense [B|1, H|1, Lq, Lk] tensor at the front of the workspace first.
//
// Candidates are cuDNN's execution plans from heuristics mode A, in its order. A choice records
// the plan index, its engine id (replay checks it), whether the mask is materialized and the
// workspace, so a replayed tactic knows its workspace before it is initialized.
#include <cudnn_frontend.h>

#include <algorithm>
#include <array>
#include <exception>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "backends/cuda/attention/attention_families.h"
#include "backends/cuda/attention/attention_problem.h"
#include "backends/cuda/attention/dense_bias.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cudnn_check.h"
#include "core/errors.h"

namespace tensoracle::backends::cuda {
namespace {

namespace fe = cudnn_frontend;

constexpr char kFamilyName[] = "cudnn.sdpa";
constexpr size_t kRegionAlignment = 256;
constexpr int64_t kMaxHeadDim = 256;  // cuDNN 9 on Hopper and newer; validate() refines per GPU and version
enum Uid : int64_t { kQ = 1, kK, kV, kO, kBias };

size_t align_up(size_t n) { return (n + kRegionAlignment - 1) / kRegionAlignment * kRegionAlignment; }

// The step as cuDNN sees it.
struct SdpaShape {
  DataType dtype = DataType::kFloat16;
  int64_t b = 1, h = 1, hk = 1, hv = 1, lq = 0, lk = 0, d = 0, dv = 0;
  float scale = 1.0f;
  bool causal = false;
  bool has_bias = false;
  // The bias through the mask's own strides ([bm, hm, lq, lk]); absent when they do not fit.
  std::optional<std::array<int64_t, 4>> bias_strides;
  int64_t bm = 1, hm = 1;  // the mask's extent along B and H (1 where it is broadcast)
  TensorGeometry mask_geometry;
  Layout q_layout = Layout::kLinear, k_layout = Layout::kLinear, v_layout = Layout::kLinear, o_layout = Layout::kLinear;

  bool operator==(const SdpaShape& o) const {
    return dtype == o.dtype && b == o.b && h == o.h && hk == o.hk && hv == o.hv && lq == o.lq && lk == o.lk && d == o.d &&
           dv == o.dv && scale == o.scale && causal == o.causal && has_bias == o.has_bias && bias_strides == o.bias_strides &&
           bm == o.bm && hm == o.hm && q_layout == o.q_layout && k_layout == o.k_layout && v_layout == o.v_layout &&
           o_layout == o.o_layout;
  }
  size_t dense_bias_bytes() const { return align_up(static_cast<size_t>(bm * hm * lq * lk) * data_type_size(dtype)); }
};

// Element strides of a [b, heads, len, dim] operand: packed, or bshd (heads interleaved per position).
std::vector<int64_t> operand_strides(Layout layout, int64_t heads, int64_t len, int64_t dim) {
  if (layout == Layout::kBshd) return {len * heads * dim, dim, heads * dim, 1};
  return {heads * len * dim, len * dim, dim, 1};
}

int64_t product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= dims[i];
  return n;
}

// The B and H extents of an operand of shape [b..., rows, cols] against the output's batch dims.
std::pair<int64_t, int64_t> operand_bh(const Dims& operand, size_t nb) {
  std::vector<int64_t> batch(nb, 1);
  const size_t own = operand.rank() - 2;
  for (size_t i = 0; i < own; ++i) batch[nb - own + i] = operand[i];
  if (nb == 0) return {1, 1};
  return {product(batch, 0, nb - 1), batch[nb - 1]};
}

Result<SdpaShape> sdpa_shape(const StepInstance& step, const DeviceInfo& device) {
  TO_ASSIGN_OR_RETURN(const AttentionProblem p, describe_attention(step));
  const std::string& layer = p.layer;
  if (p.dtype != DataType::kFloat16 && p.dtype != DataType::kBFloat16)
    return unsupported("layer '{}': cuDNN SDPA runs fp16 and bf16, not {} (kernel.attention runs it)", layer,
                       data_type_name(p.dtype));
  if (device.compute_capability() != 0 && device.compute_capability() < 80)
    return unsupported("layer '{}': cuDNN SDPA needs compute capability 8.0+, the GPU has {}.{}", layer, device.cc_major,
                       device.cc_minor);
  if (p.bool_mask())
    return unsupported("layer '{}': a bool mask is no cuDNN SDPA bias (kernel.attention runs it)", layer);
  if (p.batch_count() == 0 || p.lq == 0 || p.lk == 0 || p.d == 0 || p.dv == 0)
    return unsupported("layer '{}': empty operands (q {}, k {}, v {}) are left to kernel.attention", layer, p.q.to_string(),
                       p.k.to_string(), p.v.to_string());
  if (p.d % 8 != 0 || p.dv % 8 != 0 || p.d > kMaxHeadDim || p.dv > kMaxHeadDim)
    return unsupported("layer '{}': head dims {} (q, k) and {} (v) must be multiples of 8 and at most {} for cuDNN SDPA",
                       layer, p.d, p.dv, kMaxHeadDim);

  SdpaShape s;
  s.dtype = p.dtype;
  const size_t nb = p.batch.rank();
  std::tie(s.b, s.h) = operand_bh(p.output_shape(), nb);
  s.lq = p.lq;
  s.lk = p.lk;
  s.d = p.d;
  s.dv = p.dv;
  s.scale = static_cast<float>(p.scale);
  s.causal = p.causal;
  s.q_layout = p.q_layout;
  s.k_layout = p.k_layout;
  s.v_layout = p.v_layout;
  s.o_layout = p.out_layout;
  const auto [qb, qh] = operand_bh(p.q, nb);
  if (qb != s.b || qh != s.h)
    return unsupported("layer '{}': q {} is broadcast along the batch; cuDNN SDPA needs q to fill {}", layer,
                       p.q.to_string(), p.output_shape().to_string());
  for (const auto& [shape, heads, name] : {std::tuple{&p.k, &s.hk, "k"}, std::tuple{&p.v, &s.hv, "v"}}) {
    const auto [ob, oh] = operand_bh(*shape, nb);
    if (ob != s.b || (oh != s.h && oh != 1))
      return unsupported("layer '{}': {} {} is broadcast in a way cuDNN SDPA cannot read (batch {} of {}, heads {} of {})",
                         layer, name, shape->to_string(), ob, s.b, oh, s.h);
    *heads = oh;
  }

  if (p.has_mask) {
    s.has_bias = true;
    DeviceTensor mask{p.mask_dtype, p.mask, Layout::kLinear, nullptr};
    TO_ASSIGN_OR_RETURN(s.mask_geometry, broadcast_geometry(mask, p.scores_shape()));
    const TensorGeometry& g = s.mask_geometry;
    // H: the last batch dim; B: the others, if they collapse to one stride.
    const int64_t h_stride = nb > 0 ? g.stride[nb - 1] : 0;
    int64_t b_stride = 0;
    bool b_collapses = true;
    int64_t below = -1;  // the innermost B dim of size > 1 seen so far
    for (size_t dim = nb > 0 ? nb - 1 : 0; dim-- > 0;) {
      if (g.shape[dim] == 1) continue;
      if (below < 0) b_stride = g.stride[dim];
      else if (g.stride[dim] != g.stride[below] * g.shape[below]) b_collapses = false;
      below = static_cast<int64_t>(dim);
    }
    s.hm = h_stride != 0 ? s.h : 1;
    s.bm = (!b_collapses || b_stride != 0) ? s.b : 1;
    const int64_t q_stride = g.stride[nb], k_stride = g.stride[nb + 1];
    if (b_collapses && k_stride == 1) {
      // Size-1 dims get the packed stride (cuDNN never steps along them).
      const int64_t packed_h = s.lq * s.lk, packed_b = s.hm * packed_h;
      s.bias_strides = std::array<int64_t, 4>{s.bm == 1 ? packed_b : b_stride, s.hm == 1 ? packed_h : h_stride,
                                              s.lq == 1 ? s.lk : q_stride, 1};
    }
  }
  return s;
}

fe::DataType_t fe_type(DataType t) { return t == DataType::kBFloat16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::HALF; }

Status fe_status(fe::error_t error, const std::string& layer, const char* stage) {
  if (error.is_good()) return Status::ok();
  return unsupported("layer '{}': cuDNN SDPA {}: {}", layer, stage, error.get_message());
}

// Defines the graph for `s` (dense_bias: the bias is the packed [bm, hm, lq, lk] tensor) and
// validates it for compute capability `cc` (0: the current device's). No handle needed.
Result<std::shared_ptr<fe::graph::Graph>> define_graph(const SdpaShape& s, bool dense_bias, int cc, const std::string& layer) {
  try {
    auto graph = std::make_shared<fe::graph::Graph>();
    graph->set_io_data_type(fe_type(s.dtype))
        .set_intermediate_data_type(fe::DataType_t::FLOAT)
        .set_compute_data_type(fe::DataType_t::FLOAT);
    if (cc > 0) graph->set_sm_version(cc);
    auto tensor = [&](const char* name, Uid uid, std::vector<int64_t> dims, std::vector<int64_t> strides) {
      return graph->tensor(fe::graph::Tensor_attributes()
                               .set_name(name)
                               .set_uid(uid)
                               .set_data_type(fe_type(s.dtype))
                               .set_dim(std::move(dims))
                               .set_stride(std::move(strides)));
    };
    auto q = tensor("q", kQ, {s.b, s.h, s.lq, s.d}, operand_strides(s.q_layout, s.h, s.lq, s.d));
    auto k = tensor("k", kK, {s.b, s.hk, s.lk, s.d}, operand_strides(s.k_layout, s.hk, s.lk, s.d));
    auto v = tensor("v", kV, {s.b, s.hv, s.lk, s.dv}, operand_strides(s.v_layout, s.hv, s.lk, s.dv));
    auto options = fe::graph::SDPA_attributes().set_name("attention").set_generate_stats(false).set_attn_scale(s.scale);
    if (s.causal)  // top-left aligned: query i sees keys j <= i
      options.set_diagonal_alignment(fe::DiagonalAlignment_t::TOP_LEFT).set_diagonal_band_right_bound(0);
    if (s.has_bias) {
      std::vector<int64_t> strides{s.hm * s.lq * s.lk, s.lq * s.lk, s.lk, 1};
      if (!dense_bias) {
        TO_ASSERT(s.bias_strides.has_value());  // the strided variant is tried only with bias strides
        strides.assign(s.bias_strides->begin(), s.bias_strides->end());
      }
      options.set_bias(tensor("bias", kBias, {s.bm, s.hm, s.lq, s.lk}, std::move(strides)));
    }
    auto outputs = graph->sdpa(q, k, v, options);
    outputs[0]
        ->set_output(true)
        .set_uid(kO)
        .set_data_type(fe_type(s.dtype))
        .set_dim({s.b, s.h, s.lq, s.dv})
        .set_stride(operand_strides(s.o_layout, s.h, s.lq, s.dv));
    TO_RETURN_IF_ERROR(fe_status(graph->validate(), layer, "validate"));
    return graph;
  } catch (const std::exception& e) {
    return unsupported("layer '{}': cuDNN SDPA graph: {}", layer, e.what());
  }
}

// Lowers a validated graph to cuDNN and asks heuristics mode A for its execution plans.
Status build_plans(fe::graph::Graph& graph, cudnnHandle_t handle, const std::string& layer) {
  try {
    TO_RETURN_IF_ERROR(fe_status(graph.build_operation_graph(handle), layer, "build_operation_graph"));
    TO_RETURN_IF_ERROR(fe_status(graph.create_execution_plans({fe::HeurMode_t::A}), layer, "create_execution_plans"));
    TO_RETURN_IF_ERROR(fe_status(graph.check_support(), layer, "check_support"));
    return Status::ok();
  } catch (const std::exception& e) {
    return unsupported("layer '{}': cuDNN SDPA plans: {}", layer, e.what());
  }
}

// The graph of `s` with its plans, the bias strided when cuDNN takes it and dense otherwise.
struct BuiltGraph {
  std::shared_ptr<fe::graph::Graph> graph;
  bool dense_bias = false;
};

Result<BuiltGraph> build_graph(const SdpaShape& s, const RunContext& ctx, std::optional<bool> dense_bias,
                               const std::string& layer) {
  const int cc = ctx.device ? ctx.device->compute_capability() : 0;
  Status strided_failure = Status::ok();
  for (bool dense : {false, true}) {
    if (dense_bias && *dense_bias != dense) continue;
    if (!dense && s.has_bias && !s.bias_strides) continue;
    if (dense && !s.has_bias) continue;
    Result<std::shared_ptr<fe::graph::Graph>> graph = define_graph(s, dense, cc, layer);
    Status status = graph.status();
    if (status.is_ok()) status = build_plans(**graph, ctx.cudnn, layer);
    if (status.is_ok()) return BuiltGraph{*graph, dense};
    if (dense || !s.has_bias) return status;
    strided_failure = status;  // try again with the dense bias
  }
  return strided_failure.is_ok() ? make_error(StatusCode::kInternal, "layer '{}': no cuDNN SDPA variant tried", layer)
                                 : strided_failure;
}

class SdpaTactic final : public CudaTactic {
 public:
  SdpaTactic(SdpaShape shape, BuiltGraph built, int64_t plan, int64_t engine, int64_t workspace)
      : shape_(std::move(shape)), built_(std::move(built)), plan_(plan), engine_(engine), cudnn_workspace_(workspace) {}

  std::string name() const override { return std::string(kFamilyName) + "#plan" + std::to_string(plan_); }

  nlohmann::json choice() const override {
    return {{"plan", plan_}, {"engine", engine_}, {"dense_mask", built_.dense_bias}, {"workspace", cudnn_workspace_}};
  }

  // At shapes other than initialize()'s (the planner sizes every profile's min, opt and max), the
  // dense mask is sized for those shapes and cuDNN's part is the one measured at initialize();
  // initialize() at those shapes refuses a plan that needs more than the step is given.
  size_t workspace_size(const StepInstance& step) const override {
    size_t mask = built_.dense_bias ? shape_.dense_bias_bytes() : 0;
    if (built_.dense_bias)
      if (auto shape = sdpa_shape(step, device_); shape.is_ok()) mask = shape->dense_bias_bytes();
    return mask + static_cast<size_t>(cudnn_workspace_);
  }

  Status initialize(const StepInstance& step, const RunContext& ctx) override {
    const DeviceInfo device = ctx.device ? *ctx.device : DeviceInfo{};
    device_ = device;
    TO_ASSIGN_OR_RETURN(SdpaShape shape, sdpa_shape(step, device));
    const std::string& layer = step.anchor.node.name;
    if (!built_.graph || !(shape == shape_)) {
      // Replayed, or new shapes: rebuild, and take the recorded plan if it still is the recorded
      // engine, else the first plan of that engine.
      TO_ASSIGN_OR_RETURN(BuiltGraph built, build_graph(shape, ctx, built_.dense_bias, layer));
      const int64_t count = built.graph->get_execution_plan_count();
      auto engine_at = [&](int64_t i) {
        int64_t engine = -1;
        std::unordered_map<fe::KnobType_t, int64_t> knobs;
        return built.graph->get_engine_and_knobs_at_index(i, engine, knobs).is_good() ? engine : int64_t{-1};
      };
      std::optional<int64_t> found;
      if (plan_ < count && engine_at(plan_) == engine_) found = plan_;
      for (int64_t i = 0; i < count && !found; ++i)
        if (engine_at(i) == engine_) found = i;
      if (!found)
        return unsupported("layer '{}': cuDNN SDPA offers no plan with the recorded engine {} for these shapes", layer,
                           engine_);
      TO_RETURN_IF_ERROR(fe_status(built.graph->build_plan_at_index(*found), layer, "build_plan_at_index"));
      int64_t workspace = 0;
      TO_RETURN_IF_ERROR(fe_status(built.graph->get_workspace_size_plan_at_index(*found, workspace), layer, "workspace"));
      built_ = std::move(built);
      plan_ = *found;
      cudnn_workspace_ = workspace;
    }
    shape_ = std::move(shape);  // the graph depends only on what == compares; the mask geometry may differ
    if (workspace_size(step) > ctx.workspace_bytes)
      return unsupported("layer '{}': cuDNN SDPA engine {} needs {} bytes of workspace at these shapes, {} given", layer,
                         engine_, workspace_size(step), ctx.workspace_bytes);
    // The order in which execute takes the tensors' addresses (ascending uid), fixed here so run
    // fills a stack array and neither allocates nor touches the tactic's state.
    TO_RETURN_IF_ERROR(fe_status(built_.graph->prepare_variant_pack_template(), layer, "variant pack"));
    user_uids_ = built_.graph->get_variant_pack_uids_sorted();
    for (int64_t uid : user_uids_)
      if (uid < kQ || uid > (shape_.has_bias ? kBias : kO))
        return make_error(StatusCode::kInternal, "layer '{}': cuDNN SDPA graph expects an unknown tensor uid {}", layer, uid);
    return Status::ok();
  }

  Status run(const StepInstance& step, const StepBuffers& buffers, const RunContext& ctx) override {
    const std::string& layer = step.anchor.node.name;
    // The runtime initializes every tactic before it runs, and binds the step's q, k, v (, bias), o.
    TO_ASSERT(built_.graph && !user_uids_.empty());
    TO_ASSERT(buffers.inputs.size() >= (shape_.has_bias ? 4u : 3u) && buffers.outputs.size() == 1);
    const size_t needed = workspace_size(step);
    if (buffers.workspace_bytes < needed)
      return make_error(StatusCode::kInternal, "layer '{}': {} needs {} workspace bytes, got {}", layer, name(), needed,
                        buffers.workspace_bytes);
    char* workspace = static_cast<char*>(buffers.workspace);
    void* by_uid[kBias + 1] = {};
    by_uid[kQ] = buffers.inputs[0].data;
    by_uid[kK] = buffers.inputs[1].data;
    by_uid[kV] = buffers.inputs[2].data;
    by_uid[kO] = buffers.outputs[0].data;
    if (shape_.has_bias) {
      by_uid[kBias] = buffers.inputs[3].data;
      if (built_.dense_bias) {
        DenseBiasArgs args;
        args.mask = buffers.inputs[3].data;
        args.bias = workspace;
        args.bm = shape_.bm;
        args.hm = shape_.hm;
        args.heads = shape_.h;
        args.lq = shape_.lq;
        args.lk = shape_.lk;
        args.mask_geometry = shape_.mask_geometry;
        TO_RETURN_IF_ERROR(launch_dense_bias(args, ctx.stream));
        by_uid[kBias] = workspace;
        workspace += shape_.dense_bias_bytes();
      }
    }
    void* sorted[kBias + 1] = {};
    for (size_t i = 0; i < user_uids_.size(); ++i) sorted[i] = by_uid[user_uids_[i]];
    TO_CUDNN_RETURN_IF_ERROR(cudnnSetStream(ctx.cudnn, ctx.stream));
    fe::error_t status = built_.graph->execute_plan_at_index(ctx.cudnn, sorted, static_cast<int>(user_uids_.size()),
                                                             cudnn_workspace_ > 0 ? workspace : nullptr, plan_);
    if (status.is_bad())
      return make_error(StatusCode::kCudaError, "layer '{}': cuDNN SDPA execute (plan {}): {}", layer, plan_,
                        status.get_message());
    return Status::ok();
  }

 private:
  SdpaShape shape_;
  BuiltGraph built_;
  int64_t plan_ = 0, engine_ = -1, cudnn_workspace_ = 0;
  DeviceInfo device_;  // initialize()'s, for workspace_size at other shapes
  std::vector<int64_t> user_uids_;  // execute's order of the tensors (ascending uid), from initialize
};

class CudnnSdpaFamily final : public TacticFamily {
 public:
  std::string name() const override { return kFamilyName; }
  // q, k, v and the output with the strides of a [B, S, H, D] tensor (operand_strides).
  FamilyTraits traits(const Node&) const override {
    FamilyTraits t;
    t.bshd_inputs = {0, 1, 2};
    t.bshd_output = true;
    return t;
  }

  Status can_implement(const StepInstance& step, const DeviceInfo& device) const override {
    TO_ASSIGN_OR_RETURN(const SdpaShape s, sdpa_shape(step, device));
    // The frontend's own checks of the graph (head dims, GPU and cuDNN version); the plans
    // need a handle and are checked by candidates().
    Status status = Status::ok();
    for (bool dense : {false, true}) {
      if ((!dense && s.has_bias && !s.bias_strides) || (dense && !s.has_bias)) continue;
      status = define_graph(s, dense, device.compute_capability(), step.anchor.node.name).status();
      if (status.is_ok()) return status;
    }
    return status;
  }

  Result<std::vector<std::unique_ptr<CudaTactic>>> candidates(const StepInstance& step, const RunContext& ctx,
                                                              int limit) const override {
    const DeviceInfo device = ctx.device ? *ctx.device : DeviceInfo{};
    TO_ASSIGN_OR_RETURN(SdpaShape s, sdpa_shape(step, device));
    const std::string& layer = step.anchor.node.name;
    TO_ASSIGN_OR_RETURN(BuiltGraph built, build_graph(s, ctx, std::nullopt, layer));
    std::vector<std::unique_ptr<CudaTactic>> out;
    std::string failures;
    const int64_t count = built.graph->get_execution_plan_count();
    for (int64_t i = 0; i < count && static_cast<int>(out.size()) < std::max(limit, 1); ++i) {
      fe::error_t status = built.graph->build_plan_at_index(i);
      int64_t engine = -1, workspace = 0;
      std::unordered_map<fe::KnobType_t, int64_t> knobs;
      if (status.is_good()) status = built.graph->get_engine_and_knobs_at_index(i, engine, knobs);
      if (status.is_good()) status = built.graph->get_workspace_size_plan_at_index(i, workspace);
      if (status.is_bad()) {
        failures += fmt::format("; plan {}: {}", i, status.get_message());
        continue;
      }
      out.push_back(std::make_unique<SdpaTactic>(s, built, i, engine, workspace));
    }
    if (out.empty()) return unsupported("layer '{}': cuDNN SDPA built none of {} plans{}", layer, count, failures);
    return out;
  }

  Result<std::unique_ptr<CudaTactic>> replay(const StepInstance& step, const nlohmann::json& choice) const override {
    const std::string& layer = step.anchor.node.name;
    const auto field = [&](const char* key) -> const nlohmann::json* {
      auto it = choice.is_object() ? choice.find(key) : choice.end();
      return choice.is_object() && it != choice.end() ? &*it : nullptr;
    };
    const nlohmann::json *plan = field("plan"), *engine = field("engine"), *dense = field("dense_mask"),
                         *workspace = field("workspace");
    if (!plan || !plan->is_number_integer() || !engine || !engine->is_number_integer() || !dense || !dense->is_boolean() ||
        !workspace || !workspace->is_number_integer() || workspace->get<int64_t>() < 0)
      return invalid_argument("layer '{}': {} choice {} needs integer plan, engine, workspace (>= 0) and bool dense_mask",
                              layer, kFamilyName, choice.dump());
    TO_ASSIGN_OR_RETURN(SdpaShape s, sdpa_shape(step, DeviceInfo{}));
    BuiltGraph unbuilt{nullptr, dense->get<bool>()};
    return std::unique_ptr<CudaTactic>(
        std::make_unique<SdpaTactic>(std::move(s), std::move(unbuilt), plan->get<int64_t>(), engine->get<int64_t>(),
                                     workspace->get<int64_t>()));
  }
};

}  // namespace

std::shared_ptr<const TacticFamily> make_cudnn_sdpa_family() { return std::make_shared<CudnnSdpaFamily>(); }

}  // namespace tensoracle::backends::cuda
