// Family "cublaslt.qmatmul": Q/DQ-fused matrix products (qmatmul_plan.h says what it takes and
// how each path runs). Candidates are the explicit path and the fused path, each at the ranks of
// cuBLASLt's heuristic list, so the tactic timer picks fused or explicit by measurement; fp8 with
// per-channel weight scales has a second fused path, "fused_vector", those scales given to
// cuBLASLt's GEMM (QuantizedMatmulForm::kChannelScalesInGemm) where this cuBLASLt has that mode. A
// recorded choice {"path": "fused" | "fused_vector" | "explicit", "rank": i} replays by asking the heuristic again
// and is refused (kFailedPrecondition, naming the layer and the choice) when that rank is not
// there, or the path is not possible for the step any more, rather than running another one.
// Where the build allows it (StepInstance::fp8_fast_accumulation), an fp8 step's fused
// candidates accumulate in cuBLASLt's fast mode, and their choice says so
// ("fast_accumulation": true; absent: fp32 accumulation).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>

#include "backends/cuda/cublaslt/cublaslt_families.h"
#include "backends/cuda/cublaslt/lt_gemm.h"
#include "backends/cuda/cublaslt/qmatmul_epilogue.h"
#include "backends/cuda/cublaslt/qmatmul_plan.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cuda_tactic.h"
#include "backends/cuda/device.h"
#include "backends/cuda/kernels/quantize_args.h"
#include "backends/cuda/step_shapes.h"
#include "core/errors.h"

namespace tensoracle::backends::cuda {

namespace {

constexpr const char* kFamilyName = "cublaslt.qmatmul";
constexpr size_t kScratchAlignment = 256;

size_t aligned(size_t bytes) { return (bytes + kScratchAlignment - 1) / kScratchAlignment * kScratchAlignment; }
constexpr size_t kRowScalesOffset = kScratchAlignment / sizeof(float);  // floats

// The workspace pieces of one path, in order, before cuBLASLt's own workspace.
struct Scratch {
  size_t scales = 0;      // fp8: sa, sb, 1/sy as fp32, kFp8ScaleSpacing apart; then, for the
                          // scales in the GEMM, sa once per row from kRowScalesOffset
  size_t product = 0;     // the product before a quantize kernel, or the GEMM's bare accumulator
  size_t a = 0, b = 0;    // explicit: the dequantized operands (none for one the tactic holds)
  size_t total() const { return scales + product + a + b; }
};

// `held`: by operand, whether the explicit path holds that operand dequantized (a constant).
Scratch scratch_of(const QuantizedMatmulPlan& plan, bool fused, std::array<bool, 2> held = {false, false}) {
  Scratch s;
  const size_t cells = static_cast<size_t>(plan.rows * plan.cols);
  const size_t product = data_type_size(plan.product_type);
  const int64_t k = plan.dequantized.gemm.k;
  if (fused && plan.epilogue_kernel) {
    s.product = aligned(cells * sizeof(int32_t));  // int32 or fp32
    if (plan.kind == QuantizedMatmulPlan::Kind::kFp8) s.scales = aligned(3 * kFp8ScaleSpacing * sizeof(float));
  } else {
    if (plan.requantize && !(fused && plan.quantized_by_gemm)) s.product = aligned(cells * product);
    if (fused) s.scales = aligned(3 * kFp8ScaleSpacing * sizeof(float));
    if (fused && plan.gemm.a_scale_per_row) s.scales = aligned((kRowScalesOffset + plan.rows) * sizeof(float));
  }
  if (!fused) {
    if (!held[0]) s.a = aligned(static_cast<size_t>(plan.rows * k) * product);
    if (!held[1]) s.b = aligned(static_cast<size_t>(plan.cols * k) * product);
  }
  return s;
}

// Whether the step's operands are fp8 (the fast accumulation mode exists only there).
bool is_fp8_product(const StepInstance& step) {
  const auto& dequantized = step.quantization.dequantized;
  return !dequantized.empty() && dequantized[0].data->dtype == DataType::kFloat8E4M3;
}

enum class Path : uint8_t { kExplicit, kFused, kFusedVector };

const char* path_name(Path path) {
  switch (path) {
    case Path::kExplicit: return "explicit";
    case Path::kFused: return "fused";
    case Path::kFusedVector: return "fused_vector";
  }
  return "?";
}

class QuantizedMatmulTactic final : public CudaTactic {
 public:
  // `fast`: the fused fp8 GEMM accumulates in cuBLASLt's fast mode (only on a fused path).
  QuantizedMatmulTactic(Path path, int rank, bool fast)
      : path_(path), fused_(path != Path::kExplicit), rank_(rank), fast_(fused_ && fast) {}

  std::string name() const override {
    return fmt::format("{}#{}{}{}", kFamilyName, path_name(path_), fast_ ? "_fast" : "", rank_);
  }
  nlohmann::json choice() const override {
    nlohmann::json c{{"path", path_name(path_)}, {"rank", rank_}};
    if (fast_) c["fast_accumulation"] = true;
    return c;
  }

  bool runs_quantization_explicitly() const override { return !fused_; }

  size_t workspace_size(const StepInstance& step) const override {
    if (gemm_ && shapes_.matches(step)) return scratch_.total() + gemm_->workspace_size();
    // Before initialize() at these shapes: the scratch these shapes need and cuBLASLt's bound.
    auto plan = plan_quantized_matmul(step, 90, form());
    return (plan.is_ok() ? scratch_of(*plan, fused_).total() : 0) + kLtWorkspaceLimit;
  }

  Status initialize(const StepInstance& step, const RunContext& ctx) override {
    gemm_.reset();
    auto plan = plan_quantized_matmul(step, ctx.device ? ctx.device->compute_capability() : 0, form());
    if (!plan.is_ok()) return plan.status().with_context(fmt::format("{} (choice {})", name(), choice().dump()));
    plan_ = std::move(*plan);
    for (size_t i = 0; i < held_.size(); ++i) {
      held_[i].holds = !fused_ && i < step.quantization.dequantized.size() && step.quantization.dequantized[i].constant;
      held_[i].ready = false;
    }
    scratch_ = scratch_of(plan_, fused_, {held_[0].holds, held_[1].holds});
    if (scratch_.total() > ctx.workspace_bytes)
      return unsupported("layer '{}': {} needs {} bytes of scratch, more than the {} bytes of workspace given",
                         step.anchor.node.name, name(), scratch_.total(), ctx.workspace_bytes);
    if (fast_ && plan_.kind != QuantizedMatmulPlan::Kind::kFp8)
      return make_error(StatusCode::kFailedPrecondition, "layer '{}': {} (choice {}) asks for fp8 fast accumulation in an int8 product",
                        step.anchor.node.name, name(), choice().dump());
    LtGemmDesc desc = fused_ ? plan_.gemm : plan_.dequantized.gemm;
    desc.fast_accumulation = fast_;
    TO_ASSIGN_OR_RETURN(gemm_, LtGemm::create(ctx.cublaslt, desc, rank_, ctx.workspace_bytes - scratch_.total()));
    // LtGemm::create falls back to another rank when the heuristic lists fewer algorithms here or
    // the one at rank_ needs more workspace than given. A candidate or a recorded choice must run
    // exactly the algorithm its name says (the one timed), so that is refused, not substituted.
    if (gemm_->selected_rank() != rank_) {
      const int listed = gemm_->algorithm_count();
      gemm_.reset();
      return make_error(StatusCode::kFailedPrecondition,
                        "layer '{}': {} (choice {}) cannot be reproduced here: cuBLASLt's heuristic lists {} algorithm(s) "
                        "for {}{}; rebuild the engine on this GPU and cuBLASLt version",
                        step.anchor.node.name, name(), choice().dump(), listed, desc.to_string(),
                        rank_ < listed ? fmt::format(" and the one at rank {} needs more than the {} bytes of workspace given",
                                                     rank_, ctx.workspace_bytes - scratch_.total())
                                       : std::string());
    }
    shapes_ = StepShapes::of(step);
    return Status::ok();
  }

  // The explicit path dequantizes a constant operand (a Q/DQ graph's weight) here, once, into a
  // buffer of its own, as its run would: a run then dequantizes only what changes. Device memory
  // for speed: the weight is held in the product's type too, as an fp16 engine holds it.
  Status prepare_constants(const StepInstance& step, const StepBuffers& buffers, const RunContext& ctx) override {
    if (!gemm_ || !shapes_.matches(step)) return not_prepared_for(step, name());
    for (size_t i = 0; i < held_.size(); ++i) {
      Held& held = held_[i];
      held.ready = false;
      if (!held.holds) continue;
      const int64_t rows = i == 0 ? plan_.rows : plan_.cols;
      const size_t bytes = static_cast<size_t>(rows * plan_.dequantized.gemm.k) * data_type_size(plan_.product_type);
      if (held.value.size() < bytes) {
        held.value = DeviceBuffer();
        TO_ASSIGN_OR_RETURN(held.value, DeviceBuffer::allocate(bytes, "a dequantized constant operand"));
      }
      const size_t data = i == 0 ? plan_.a_data : plan_.b_data, scale = i == 0 ? plan_.a_scale : plan_.b_scale;
      TO_ASSERT(std::max(data, scale) < buffers.inputs.size());
      if (!input(buffers, data) || !input(buffers, scale))
        return make_error(StatusCode::kInternal, "layer '{}': {}: constant operand {} is not bound", step.anchor.node.name, name(), i);
      TO_RETURN_IF_ERROR(dequantize_operand(step, buffers, i, held.value.data(), ctx.stream));
      held.ready = true;
    }
    return Status::ok();
  }

  Status run(const StepInstance& step, const StepBuffers& buffers, const RunContext& ctx) override {
    if (!gemm_ || !shapes_.matches(step)) return not_prepared_for(step, name());
    TO_ASSERT(buffers.workspace_bytes >= scratch_.total() && !buffers.outputs.empty() &&
              std::max({plan_.a_data, plan_.a_scale, plan_.b_data, plan_.b_scale, plan_.y_scale}) < buffers.inputs.size() &&
              std::max(plan_.dequantized.bias_input, plan_.dequantized.residual_input) <
                  static_cast<int>(buffers.extra_inputs.size()));
    char* scratch = static_cast<char*>(buffers.workspace);
    Pieces p;
    p.scales = reinterpret_cast<float*>(scratch);
    p.product = scratch + scratch_.scales;
    p.a = p.product + scratch_.product;
    p.b = p.a + scratch_.a;
    p.gemm_workspace = p.b + scratch_.b;
    p.gemm_workspace_bytes = buffers.workspace_bytes - scratch_.total();
    if (!fused_) return run_explicit(step, buffers, ctx, p);
    if (plan_.epilogue_kernel) return run_with_epilogue_kernel(buffers, ctx, p);
    return run_fp8(step, buffers, ctx, p);
  }

  int algorithm_count() const { return gemm_ ? gemm_->algorithm_count() : 0; }

 private:
  struct Pieces {
    float* scales = nullptr;
    char *product = nullptr, *a = nullptr, *b = nullptr, *gemm_workspace = nullptr;
    size_t gemm_workspace_bytes = 0;
  };

  QuantizedMatmulForm form() const {
    return path_ == Path::kFusedVector ? QuantizedMatmulForm::kChannelScalesInGemm : QuantizedMatmulForm::kDefault;
  }
  const void* input(const StepBuffers& buffers, size_t i) const { return buffers.inputs[i].data; }
  const void* extra(const StepBuffers& buffers, int i) const {
    return i >= 0 ? buffers.extra_inputs[static_cast<size_t>(i)].data : nullptr;
  }

  // The GEMM's arguments with the epilogue's operands (bias, residual) bound.
  LtGemmArgs gemm_args(const StepBuffers& buffers) const {
    LtGemmArgs args;
    args.bias = extra(buffers, plan_.dequantized.bias_input);
    args.c = extra(buffers, plan_.dequantized.residual_input);
    args.beta = args.c ? 1.0f : 0.0f;
    return args;
  }

  // The trailing quantize layer as a kernel on the product in `product`.
  Status quantize(const StepInstance& step, const StepBuffers& buffers, const RunContext& ctx, const void* product) const {
    const FusedQuantize& q = *step.quantization.requantize;
    TO_ASSIGN_OR_RETURN(const QuantizeArgs args, quantize_args_of(*q.layer, q.before, *q.scale, plan_.output_type));
    return cuda_status(launch_quantize(product, input(buffers, plan_.y_scale), buffers.outputs[0].data, args, ctx.stream),
                       "quantize kernel (Q/DQ-fused matmul)");
  }

  Status run_fp8(const StepInstance& step, const StepBuffers& buffers, const RunContext& ctx, const Pieces& p) {
    LtGemmArgs args = gemm_args(buffers);
    const bool fp32_scales = plan_.a_scale_type == DataType::kFloat32 && plan_.b_scale_type == DataType::kFloat32;
    if (plan_.gemm.b_scale_per_column) {  // fp32 (the plan's rule): sa per row, sb as given, 1/sy
      float* row_scales = p.scales + kRowScalesOffset;
      TO_CUDA_RETURN_IF_ERROR(launch_fp8_row_scales(static_cast<const float*>(input(buffers, plan_.a_scale)), plan_.rows,
                                                    plan_.quantized_by_gemm ? input(buffers, plan_.y_scale) : nullptr,
                                                    plan_.y_scale_type, row_scales, p.scales + 2 * kFp8ScaleSpacing,
                                                    ctx.stream));
      args.a_scale = row_scales;
      args.b_scale = static_cast<const float*>(input(buffers, plan_.b_scale));
      if (plan_.quantized_by_gemm) args.d_scale = p.scales + 2 * kFp8ScaleSpacing;
    } else if (fp32_scales && !plan_.quantized_by_gemm) {
      args.a_scale = static_cast<const float*>(input(buffers, plan_.a_scale));
      args.b_scale = static_cast<const float*>(input(buffers, plan_.b_scale));
    } else {
      TO_CUDA_RETURN_IF_ERROR(launch_fp8_gemm_scales(input(buffers, plan_.a_scale), plan_.a_scale_type,
                                                     input(buffers, plan_.b_scale), plan_.b_scale_type,
                                                     plan_.quantized_by_gemm ? input(buffers, plan_.y_scale) : nullptr,
                                                     plan_.y_scale_type, p.scales, ctx.stream));
      args.a_scale = p.scales;
      args.b_scale = p.scales + kFp8ScaleSpacing;
      args.d_scale = p.scales + 2 * kFp8ScaleSpacing;
    }
    const bool kernel_quantizes = plan_.requantize && !plan_.quantized_by_gemm;
    args.a = input(buffers, plan_.a_data);
    args.b = input(buffers, plan_.b_data);
    args.d = kernel_quantizes ? p.product : buffers.outputs[0].data;
    TO_RETURN_IF_ERROR(gemm_->run(ctx.cublaslt, args, ctx.stream, p.gemm_workspace, p.gemm_workspace_bytes));
    return kernel_quantizes ? quantize(step, buffers, ctx, p.product) : Status::ok();
  }

  Status run_with_epilogue_kernel(const StepBuffers& buffers, const RunContext& ctx, const Pieces& p) {
    LtGemmArgs args;
    if (plan_.kind == QuantizedMatmulPlan::Kind::kFp8) {  // the bare fp32 sum: unit A/B scales
      TO_CUDA_RETURN_IF_ERROR(launch_fp8_gemm_scales(nullptr, DataType::kFloat32, nullptr, DataType::kFloat32, nullptr,
                                                     DataType::kFloat32, p.scales, ctx.stream));
      args.a_scale = p.scales;
      args.b_scale = p.scales + kFp8ScaleSpacing;
    }
    args.a = input(buffers, plan_.a_data);
    args.b = input(buffers, plan_.b_data);
    args.d = p.product;
    TO_RETURN_IF_ERROR(gemm_->run(ctx.cublaslt, args, ctx.stream, p.gemm_workspace, p.gemm_workspace_bytes));
    QuantizedEpilogueArgs e;
    e.acc_type = plan_.gemm.output_type;
    e.rows = plan_.rows;
    e.cols = plan_.cols;
    e.product_type = plan_.product_type;
    e.a_scale = input(buffers, plan_.a_scale);
    e.a_scale_type = plan_.a_scale_type;
    e.b_scale = input(buffers, plan_.b_scale);
    e.b_scale_type = plan_.b_scale_type;
    e.b_per_channel = plan_.b_per_channel;
    e.bias = extra(buffers, plan_.dequantized.bias_input);
    e.residual = extra(buffers, plan_.dequantized.residual_input);
    const LtActivation act = plan_.dequantized.gemm.activation;
    e.activation = act == LtActivation::kRelu ? 1 : act == LtActivation::kGeluTanh ? 2 : 0;
    e.y_scale = plan_.requantize ? input(buffers, plan_.y_scale) : nullptr;
    e.y_scale_type = plan_.y_scale_type;
    e.output_type = plan_.output_type;
    return cuda_status(launch_quantized_epilogue(p.product, buffers.outputs[0].data, e, ctx.stream),
                       "quantized GEMM epilogue kernel");
  }

  // Operand i (0: a, 1: b) dequantized into `to` as its dequantize layer computes it.
  Status dequantize_operand(const StepInstance& step, const StepBuffers& buffers, size_t i, void* to,
                            cudaStream_t stream) const {
    const FusedDequantize& dq = step.quantization.dequantized[i];
    TO_ASSIGN_OR_RETURN(const QuantizeArgs q, quantize_args_of(*dq.layer, *dq.data, *dq.scale, plan_.product_type));
    const size_t data = i == 0 ? plan_.a_data : plan_.b_data, scale = i == 0 ? plan_.a_scale : plan_.b_scale;
    return cuda_status(launch_quantize(input(buffers, data), input(buffers, scale), to, q, stream),
                       "dequantize kernel (Q/DQ-fused matmul)");
  }

  // The layers as they would run unfused, inside one step; a constant operand's dequantize ran
  // once, in prepare_constants.
  Status run_explicit(const StepInstance& step, const StepBuffers& buffers, const RunContext& ctx, const Pieces& p) const {
    const auto dequantized = [&](size_t i, void* scratch) -> Result<const void*> {
      if (held_[i].holds) {
        if (!held_[i].ready)
          return make_error(StatusCode::kFailedPrecondition, "layer '{}': {} runs before prepare_constants",
                            step.anchor.node.name, name());
        return static_cast<const void*>(held_[i].value.data());
      }
      TO_RETURN_IF_ERROR(dequantize_operand(step, buffers, i, scratch, ctx.stream));
      return static_cast<const void*>(scratch);
    };
    LtGemmArgs args = gemm_args(buffers);
    TO_ASSIGN_OR_RETURN(args.a, dequantized(0, p.a));
    TO_ASSIGN_OR_RETURN(args.b, dequantized(1, p.b));
    args.d = plan_.requantize ? p.product : buffers.outputs[0].data;
    TO_RETURN_IF_ERROR(gemm_->run(ctx.cublaslt, args, ctx.stream, p.gemm_workspace, p.gemm_workspace_bytes));
    return plan_.requantize ? quantize(step, buffers, ctx, p.product) : Status::ok();
  }

  // An operand the explicit path holds dequantized (a constant), by operand.
  struct Held {
    bool holds = false;
    bool ready = false;  // prepare_constants filled `value`
    DeviceBuffer value;
  };

  Path path_;
  bool fused_;
  int rank_;
  bool fast_;
  std::array<Held, 2> held_;
  QuantizedMatmulPlan plan_;
  Scratch scratch_;
  std::unique_ptr<LtGemm> gemm_;
  StepShapes shapes_;
};

class QuantizedMatmulFamily final : public TacticFamily {
 public:
  std::string name() const override { return kFamilyName; }
  FamilyTraits traits(const Node&) const override { return FamilyTraits::quantized_product(); }

  Status can_implement(const StepInstance& step, const DeviceInfo& device) const override {
    TO_ASSIGN_OR_RETURN(const QuantizedMatmulPlan plan, plan_quantized_matmul(step, device.compute_capability()));
    return cublaslt_can_run(plan.gemm, step.anchor.node.name);
  }

  Result<std::vector<std::unique_ptr<CudaTactic>>> candidates(const StepInstance& step, const RunContext& ctx,
                                                              int limit) const override {
    std::vector<std::unique_ptr<CudaTactic>> out;
    Status first_failure = Status::ok();
    // Each path gets half the candidates; the explicit path (our kernels around a plain GEMM)
    // comes first so that the timer checks the fused one against it. At a limit of 1: the fused
    // path alone (the best guess).
    // fp8 with per-channel weight scales has two fused forms, which share the fused half, the
    // one in cuBLASLt's GEMM first (at a limit of 1 the only one, unless cuBLASLt has no
    // algorithm for it).
    const bool vector_form = plan_quantized_matmul(step, 90, QuantizedMatmulForm::kChannelScalesInGemm).is_ok();
    const int fused_count = std::max(1, limit - limit / 2), explicit_count = limit / 2;
    const int per_fused_form = vector_form ? std::max(1, fused_count / 2) : fused_count;
    const bool fast = step.fp8_fast_accumulation && is_fp8_product(step);
    for (const Path path : {Path::kExplicit, Path::kFusedVector, Path::kFused}) {
      if (path == Path::kFusedVector && !vector_form) continue;
      if (path == Path::kFused && vector_form && limit <= 1 && !out.empty()) continue;
      for (int rank = 0; rank < (path == Path::kExplicit ? explicit_count : per_fused_form); ++rank) {
        auto tactic = std::make_unique<QuantizedMatmulTactic>(path, rank, fast);
        const Status made = tactic->initialize(step, ctx);
        if (!made.is_ok()) {
          if (first_failure.is_ok()) first_failure = made;
          break;
        }
        const int available = tactic->algorithm_count();
        out.push_back(std::move(tactic));
        if (rank + 1 >= available) break;
      }
    }
    if (out.empty()) return first_failure;
    return out;
  }

  Result<std::unique_ptr<CudaTactic>> replay(const StepInstance& step, const nlohmann::json& choice) const override {
    const auto path = choice.is_object() ? choice.find("path") : choice.end();
    const auto rank = choice.is_object() ? choice.find("rank") : choice.end();
    const auto fast = choice.is_object() ? choice.find("fast_accumulation") : choice.end();
    std::optional<Path> known;
    for (const Path p : {Path::kExplicit, Path::kFused, Path::kFusedVector})
      if (path != choice.end() && path->is_string() && *path == path_name(p)) known = p;
    if (!known || rank == choice.end() || !rank->is_number_integer() || rank->get<int64_t>() < 0 ||
        rank->get<int64_t>() >= kLtMaxAlgorithms ||
        (fast != choice.end() && (!fast->is_boolean() || (fast->get<bool>() && *known == Path::kExplicit))))
      return invalid_argument("layer '{}': {} choice {} needs \"path\": \"fused\", \"fused_vector\" or \"explicit\", \"rank\": "
                              "an integer in [0, {}) and optionally, on a fused path, \"fast_accumulation\": a boolean",
                              step.anchor.node.name, kFamilyName, choice.dump(), kLtMaxAlgorithms);
    return std::unique_ptr<CudaTactic>(
        std::make_unique<QuantizedMatmulTactic>(*known, rank->get<int>(), fast != choice.end() && fast->get<bool>()));
  }
};

}  // namespace

std::shared_ptr<const TacticFamily> make_cublaslt_qmatmul_family() { return std::make_shared<QuantizedMatmulFamily>(); }

}  // namespace tensoracle::backends::cuda
