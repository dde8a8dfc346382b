// Family "cublaslt.matmul": matrix products (OpKind::kMatMul) on cuBLASLt with the bias,
// residual and relu/gelu_tanh epilogue fused (matmul_plan.h says what maps to what). Candidates
// are the ranks of cuBLASLt's heuristic list at the step's shapes; a recorded choice
// {"rank": i} replays by asking the heuristic again and taking rank i (rank 0 when the list got
// shorter, e.g. on another GPU or library version).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "backends/cuda/cublaslt/cublaslt_families.h"
#include "backends/cuda/cublaslt/lt_gemm.h"
#include "backends/cuda/cublaslt/matmul_plan.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cuda_tactic.h"
#include "backends/cuda/step_shapes.h"
#include "core/errors.h"

namespace tensoracle::backends::cuda {

namespace {

constexpr const char* kFamilyName = "cublaslt.matmul";

// A cuBLASLt handle of the current device for heuristic queries outside a run (can_implement has
// no RunContext), created on first use and kept for the process; null where none can be created
// (no GPU).
cublasLtHandle_t query_handle() {
  static std::mutex mutex;
  static std::map<int, cublasLtHandle_t> handles;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();  // leave no sticky error behind for the caller's next check
    return nullptr;
  }
  const std::lock_guard<std::mutex> lock(mutex);
  auto it = handles.find(device);
  if (it == handles.end()) {
    cublasLtHandle_t handle = nullptr;
    if (cublasLtCreate(&handle) != CUBLAS_STATUS_SUCCESS) handle = nullptr;
    it = handles.emplace(device, handle).first;
  }
  return it->second;
}

}  // namespace

Status cublaslt_can_run(const LtGemmDesc& desc, const std::string& layer) {
  cublasLtHandle_t handle = query_handle();
  if (!handle) return Status::ok();
  auto gemm = LtGemm::create(handle, desc);
  return gemm.is_ok() ? Status::ok() : gemm.status().with_context(fmt::format("layer '{}'", layer));
}

namespace {

class MatmulTactic final : public CudaTactic {
 public:
  explicit MatmulTactic(int rank) : rank_(rank) {}

  std::string name() const override { return fmt::format("{}#{}", kFamilyName, rank_); }
  nlohmann::json choice() const override { return {{"rank", rank_}}; }

  // Exact for the shapes initialize() planned; for other shapes (a replayed tactic before its
  // initialize, or a dynamic shape's maximum) the heuristic's bound, since the algorithm at that
  // rank is only known once planned.
  size_t workspace_size(const StepInstance& step) const override {
    if (gemm_ && shapes_.matches(step)) return gemm_->workspace_size();
    if (initialized_ && shapes_.matches(step)) return 0;
    return kLtWorkspaceLimit;
  }

  Status initialize(const StepInstance& step, const RunContext& ctx) override {
    initialized_ = false;
    gemm_.reset();
    TO_ASSIGN_OR_RETURN(plan_, plan_matmul(step));
    if (plan_.kind == MatmulPlan::Kind::kGemm) {
      TO_ASSIGN_OR_RETURN(gemm_, LtGemm::create(ctx.cublaslt, plan_.gemm, rank_, ctx.workspace_bytes));
    }
    shapes_ = StepShapes::of(step);
    initialized_ = true;
    return Status::ok();
  }

  Status run(const StepInstance& step, const StepBuffers& buffers, const RunContext& ctx) override {
    if (!initialized_ || !shapes_.matches(step)) return not_prepared_for(step, name());
    switch (plan_.kind) {
      case MatmulPlan::Kind::kEmpty: return Status::ok();
      case MatmulPlan::Kind::kZeroFill: {
        TO_ASSERT(!buffers.outputs.empty());
        const DeviceTensor& out = buffers.outputs[0];
        TO_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(out.data, 0, out.byte_size(), ctx.stream));
        return Status::ok();
      }
      case MatmulPlan::Kind::kGemm: break;
    }
    // The runtime binds the buffers of the step the plan was made for: the operands it indexes are there.
    TO_ASSERT(buffers.inputs.size() >= 2 && !buffers.outputs.empty() &&
              std::max(plan_.residual_input, plan_.bias_input) < static_cast<int>(buffers.extra_inputs.size()));
    const size_t element = data_type_size(plan_.gemm.input_type);
    const char* a = static_cast<const char*>(buffers.inputs[0].data);
    const char* b = static_cast<const char*>(buffers.inputs[1].data);
    char* d = static_cast<char*>(buffers.outputs[0].data);
    const char* c = plan_.residual_input >= 0
                        ? static_cast<const char*>(buffers.extra_inputs[static_cast<size_t>(plan_.residual_input)].data)
                        : nullptr;
    LtGemmArgs args;
    args.bias = plan_.bias_input >= 0 ? buffers.extra_inputs[static_cast<size_t>(plan_.bias_input)].data : nullptr;
    args.beta = c ? 1.0f : 0.0f;
    for (const MatmulPlan::Call& call : plan_.calls) {
      args.a = a + call.a * static_cast<int64_t>(element);
      args.b = b + call.b * static_cast<int64_t>(element);
      args.d = d + call.d * static_cast<int64_t>(element);
      args.c = c ? c + call.d * static_cast<int64_t>(element) : nullptr;
      TO_RETURN_IF_ERROR(gemm_->run(ctx.cublaslt, args, ctx.stream, buffers.workspace, buffers.workspace_bytes));
    }
    return Status::ok();
  }

 private:
  int rank_;
  bool initialized_ = false;
  MatmulPlan plan_;
  std::unique_ptr<LtGemm> gemm_;
  StepShapes shapes_;  // what initialize() planned
};

class MatmulFamily final : public TacticFamily {
 public:
  std::string name() const override { return kFamilyName; }
  // Bias, residual and relu/gelu_tanh as cuBLASLt epilogues (matmul_plan.h).
  FamilyTraits traits(const Node&) const override {
    FamilyTraits t;
    t.epilogue = true;
    return t;
  }

  Status can_implement(const StepInstance& step, const DeviceInfo& device) const override {
    TO_ASSIGN_OR_RETURN(const MatmulPlan plan, plan_matmul(step));
    if (plan.kind == MatmulPlan::Kind::kGemm && plan.gemm.input_type == DataType::kBFloat16 &&
        device.compute_capability() < 80)
      return unsupported("layer '{}': bf16 needs compute capability 8.0+, this GPU is {}.{}", step.anchor.node.name,
                         device.cc_major, device.cc_minor);
    // cuBLASLt may have no algorithm for an epilogue at some type and alignment.
    if (plan.kind == MatmulPlan::Kind::kGemm) return cublaslt_can_run(plan.gemm, step.anchor.node.name);
    return Status::ok();
  }

  Result<std::vector<std::unique_ptr<CudaTactic>>> candidates(const StepInstance& step, const RunContext& ctx,
                                                              int limit) const override {
    TO_ASSIGN_OR_RETURN(const MatmulPlan plan, plan_matmul(step));
    int count = 1;
    if (plan.kind == MatmulPlan::Kind::kGemm) {
      TO_ASSIGN_OR_RETURN(const auto probe, LtGemm::create(ctx.cublaslt, plan.gemm));
      count = std::min(std::max(limit, 1), probe->algorithm_count());
    }
    std::vector<std::unique_ptr<CudaTactic>> out;
    for (int rank = 0; rank < count; ++rank) {
      auto tactic = std::make_unique<MatmulTactic>(rank);
      TO_RETURN_IF_ERROR(tactic->initialize(step, ctx));
      out.push_back(std::move(tactic));
    }
    return out;
  }

  Result<std::unique_ptr<CudaTactic>> replay(const StepInstance& step, const nlohmann::json& choice) const override {
    const auto rank = choice.find("rank");
    if (!choice.is_object() || rank == choice.end() || !rank->is_number_integer() || rank->get<int64_t>() < 0 ||
        rank->get<int64_t>() >= kLtMaxAlgorithms)
      return invalid_argument("layer '{}': {} choice {} needs \"rank\": an integer in [0, {})", step.anchor.node.name,
                              kFamilyName, choice.dump(), kLtMaxAlgorithms);
    return std::unique_ptr<CudaTactic>(std::make_unique<MatmulTactic>(rank->get<int>()));
  }
};

}  // namespace

std::shared_ptr<const TacticFamily> make_cublaslt_matmul_family() { return std::make_shared<MatmulFamily>(); }

}  // namespace tensoracle::backends::cuda
