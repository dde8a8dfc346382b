// Family "cutlass.qmatmul" (cutlass_families.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <vector>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cutlass/cutlass_families.h"
#include "backends/cuda/step_shapes.h"
#include "core/errors.h"

namespace tensoracle::backends::cuda {

namespace {

constexpr const char* kFamilyName = "cutlass.qmatmul";

QuantizedActivation activation_of(LtActivation act) {
  switch (act) {
    case LtActivation::kRelu: return QuantizedActivation::kRelu;
    case LtActivation::kGeluTanh: return QuantizedActivation::kGeluTanh;
    case LtActivation::kGeluErf: return QuantizedActivation::kGeluErf;
    default: return QuantizedActivation::kNone;
  }
}

// The sizes of `plan`'s product (what CUTLASS's can_implement looks at).
Sm90QuantizedGemmArgs shape_args(const QuantizedMatmulPlan& plan) {
  Sm90QuantizedGemmArgs args;
  args.m = plan.rows;
  args.n = plan.cols;
  args.k = plan.dequantized.gemm.k;
  args.b_per_channel = plan.b_per_channel;
  args.activation = activation_of(plan.dequantized.gemm.activation);
  args.sm_count = 1;  // any: CUTLASS's size checks need none, and would ask the device for 0
  return args;
}

Result<QuantizedMatmulPlan> plan_of(const StepInstance& step, int cc) {
  return plan_quantized_matmul(step, cc, QuantizedMatmulForm::kDefault, EpilogueKernel::kOwn);
}

class Sm90QuantizedMatmulTactic final : public CudaTactic {
 public:
  explicit Sm90QuantizedMatmulTactic(Sm90GemmTile tile) : tile_(tile) {}

  std::string name() const override { return fmt::format("{}#{}", kFamilyName, sm90_gemm_tile_name(tile_)); }
  nlohmann::json choice() const override { return {{"tile", sm90_gemm_tile_name(tile_)}}; }

  size_t workspace_size(const StepInstance& step) const override {
    if (initialized_ && shapes_.matches(step)) return workspace_;
    auto plan = plan_of(step, 90);
    if (!plan.is_ok()) return 0;
    auto gemm = sm90_gemm_for(*plan, step.anchor.node.name, 90);
    if (!gemm.is_ok()) return 0;
    gemm->tile = tile_;
    return sm90_quantized_gemm_workspace(*gemm, shape_args(*plan));
  }

  Status initialize(const StepInstance& step, const RunContext& ctx) override {
    initialized_ = false;
    const int cc = ctx.device ? ctx.device->compute_capability() : 0;
    const std::string& layer = step.anchor.node.name;
    auto plan = plan_of(step, cc);
    if (!plan.is_ok()) return plan.status().with_context(fmt::format("{} (choice {})", name(), choice().dump()));
    plan_ = std::move(*plan);
    TO_ASSIGN_OR_RETURN_CONTEXT(gemm_, sm90_gemm_for(plan_, layer, cc), fmt::format("{} (choice {})", name(), choice().dump()));
    gemm_.tile = tile_;
    const Sm90QuantizedGemmArgs args = shape_args(plan_);
    if (const std::string refusal = sm90_quantized_gemm_refusal(gemm_, args); !refusal.empty())
      return unsupported("layer '{}': {} cannot run {} ({}x{}x{}): {}", layer, name(), gemm_.to_string(), args.m, args.n,
                         args.k, refusal);
    workspace_ = sm90_quantized_gemm_workspace(gemm_, args);
    launcher_ = make_sm90_quantized_gemm_launcher(gemm_);
    if (!launcher_) return unsupported("layer '{}': {}: no kernel compiled for {}", layer, name(), gemm_.to_string());
    TO_CUDA_RETURN_IF_ERROR(launcher_->prepare());
    if (workspace_ > ctx.workspace_bytes)
      return unsupported("layer '{}': {} needs {} bytes of workspace, more than the {} bytes given", layer, name(), workspace_,
                         ctx.workspace_bytes);
    sm_count_ = ctx.device ? ctx.device->sm_count : 0;
    shapes_ = StepShapes::of(step);
    initialized_ = true;
    return Status::ok();
  }

  Status run(const StepInstance& step, const StepBuffers& buffers, const RunContext& ctx) override {
    if (!initialized_ || !shapes_.matches(step)) return not_prepared_for(step, name());
    const int bias = plan_.dequantized.bias_input, residual = plan_.dequantized.residual_input;
    TO_ASSERT(!buffers.outputs.empty() &&
              std::max({plan_.a_data, plan_.a_scale, plan_.b_data, plan_.b_scale}) < buffers.inputs.size() &&
              std::max(bias, residual) < static_cast<int>(buffers.extra_inputs.size()));
    Sm90QuantizedGemmArgs args = shape_args(plan_);
    args.a = buffers.inputs[plan_.a_data].data;
    args.b = buffers.inputs[plan_.b_data].data;
    args.a_scale = static_cast<const float*>(buffers.inputs[plan_.a_scale].data);
    args.b_scale = static_cast<const float*>(buffers.inputs[plan_.b_scale].data);
    args.bias = bias >= 0 ? buffers.extra_inputs[static_cast<size_t>(bias)].data : nullptr;
    args.residual = residual >= 0 ? buffers.extra_inputs[static_cast<size_t>(residual)].data : nullptr;
    args.y_scale = plan_.requantize ? static_cast<const float*>(buffers.inputs[plan_.y_scale].data) : nullptr;
    args.d = buffers.outputs[0].data;
    args.sm_count = sm_count_;
    const cudaError_t ran = launcher_->launch(args, buffers.workspace, buffers.workspace_bytes, ctx.stream);
    if (ran == cudaSuccess) return Status::ok();
    return cuda_status(ran, fmt::format("layer '{}': {} ({})", step.anchor.node.name, name(), gemm_.to_string()).c_str());
  }

 private:
  Sm90GemmTile tile_;
  bool initialized_ = false;
  QuantizedMatmulPlan plan_;
  Sm90QuantizedGemm gemm_;
  size_t workspace_ = 0;
  int sm_count_ = 0;
  std::unique_ptr<Sm90QuantizedGemmLauncher> launcher_;
  StepShapes shapes_;
};

class Sm90QuantizedMatmulFamily final : public TacticFamily {
 public:
  std::string name() const override { return kFamilyName; }
  FamilyTraits traits(const Node&) const override { return FamilyTraits::quantized_product(); }

  Status can_implement(const StepInstance& step, const DeviceInfo& device) const override {
    TO_ASSIGN_OR_RETURN(const QuantizedMatmulPlan plan, plan_of(step, device.compute_capability()));
    TO_ASSIGN_OR_RETURN(const Sm90QuantizedGemm gemm, sm90_gemm_for(plan, step.anchor.node.name, device.compute_capability()));
    if (const std::string refusal = sm90_quantized_gemm_refusal(gemm, shape_args(plan)); !refusal.empty())
      return unsupported("layer '{}': {}: {}", step.anchor.node.name, kFamilyName, refusal);
    return Status::ok();
  }

  // Half the limit in tiles (all from 6), one (the one for the number of rows) at 2 or 3, and at 1
  // none where cuBLASLt's fused path, the next family's guess, takes the step: an untimed build
  // (optimization level 0) runs that. A step with a gelu_erf is ours alone.
  Result<std::vector<std::unique_ptr<CudaTactic>>> candidates(const StepInstance& step, const RunContext& ctx,
                                                              int limit) const override {
    std::vector<std::unique_ptr<CudaTactic>> out;
    auto plan = plan_of(step, 90);
    const bool ours_alone = plan.is_ok() && plan->dequantized.gemm.activation == LtActivation::kGeluErf;
    if (limit < 2 && !ours_alone) return out;
    std::vector<Sm90GemmTile> tiles(std::begin(kSm90GemmTiles), std::end(kSm90GemmTiles));
    if (limit >= 4) tiles.resize(std::min(tiles.size(), static_cast<size_t>(limit / 2)));
    if (limit < 4) {
      const bool many_rows = plan.is_ok() && plan->rows >= 1024;
      tiles = {many_rows ? Sm90GemmTile::kCooperative128x128 : Sm90GemmTile::kPingpong64x128};
    }
    Status first_failure = Status::ok();
    for (const Sm90GemmTile tile : tiles) {
      auto tactic = std::make_unique<Sm90QuantizedMatmulTactic>(tile);
      const Status made = tactic->initialize(step, ctx);
      if (made.is_ok()) out.push_back(std::move(tactic));
      else if (first_failure.is_ok()) first_failure = made;
    }
    if (out.empty()) return first_failure;
    return out;
  }

  Result<std::unique_ptr<CudaTactic>> replay(const StepInstance& step, const nlohmann::json& choice) const override {
    const auto tile = choice.is_object() ? choice.find("tile") : choice.end();
    if (tile != choice.end() && tile->is_string())
      for (const Sm90GemmTile t : kSm90GemmTiles)
        if (*tile == sm90_gemm_tile_name(t)) return std::unique_ptr<CudaTactic>(std::make_unique<Sm90QuantizedMatmulTactic>(t));
    std::vector<std::string> names;
    for (const Sm90GemmTile t : kSm90GemmTiles) names.push_back(fmt::format("\"{}\"", sm90_gemm_tile_name(t)));
    return invalid_argument("layer '{}': {} choice {} needs \"tile\": one of {}", step.anchor.node.name, kFamilyName,
                            choice.dump(), fmt::join(names, ", "));
  }
};

}  // namespace

Result<Sm90QuantizedGemm> sm90_gemm_for(const QuantizedMatmulPlan& plan, const std::string& layer, int cc) {
  if (cc != 90)
    return unsupported("layer '{}': {} runs on compute capability 9.0 only (sm_90a code), this GPU is {}.{}", layer, kFamilyName,
                       cc / 10, cc % 10);
  const DataType input = plan.kind == QuantizedMatmulPlan::Kind::kInt8 ? DataType::kInt8 : DataType::kFloat8E4M3;
  if (plan.product_type != DataType::kFloat16)
    return unsupported("layer '{}': {} computes an fp16 product, not {}", layer, kFamilyName, data_type_name(plan.product_type));
  if (plan.requantize ? plan.output_type != input : plan.output_type != DataType::kFloat16)
    return unsupported("layer '{}': {} writes the fp16 product or quantizes it to its operands' type ({}), not {}", layer,
                       kFamilyName, data_type_name(input), data_type_name(plan.output_type));
  const bool residual = plan.dequantized.residual_input >= 0;
  if (plan.requantize && residual)
    return unsupported("layer '{}': {} quantizes no product with a residual", layer, kFamilyName);
  if (plan.a_scale_type != DataType::kFloat32 || plan.b_scale_type != DataType::kFloat32 ||
      (plan.requantize && plan.y_scale_type != DataType::kFloat32))
    return unsupported("layer '{}': {} reads fp32 scales only", layer, kFamilyName);
  const LtGemmDesc& g = plan.dequantized.gemm;
  const int64_t n_multiple = plan.requantize ? 16 : 8;  // 16-byte rows of d
  if (g.k % 16 != 0 || g.n % n_multiple != 0)
    return unsupported("layer '{}': {} needs K a multiple of 16 and N of {} (16-byte rows), not K = {} and N = {}", layer,
                       kFamilyName, n_multiple, g.k, g.n);
  Sm90QuantizedGemm gemm;
  gemm.input = input;
  gemm.product = DataType::kFloat16;
  gemm.output = plan.output_type;
  gemm.residual = residual;
  gemm.gelu_erf = g.activation == LtActivation::kGeluErf;
  return gemm;
}

std::shared_ptr<const TacticFamily> make_cutlass_qmatmul_family() { return std::make_shared<Sm90QuantizedMatmulFamily>(); }

}  // namespace tensoracle::backends::cuda
