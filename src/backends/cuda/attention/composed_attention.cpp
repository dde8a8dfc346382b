// "kernel.attention": attention as three launches per group of matrices,
//   S = q k^T (fp32) -> P = masked softmax(S) (the input type) -> y = P v,
// with S and P in the step's workspace. Batch dims broadcast as the CPU reference allows: the
// innermost batch dims over which q, k and v each advance by one stride form one strided-batched
// GEMM (a broadcast operand has stride 0); the dims outside them are walked by a host loop of
// launches. S and P are bounded by kScoresBudget: a group larger than that runs in chunks.
#include <algorithm>
#include <optional>

#include "backends/cuda/attention/attention_families.h"
#include "backends/cuda/attention/attention_problem.h"
#include "backends/cuda/attention/batched_gemm.h"
#include "backends/cuda/attention/masked_softmax.h"
#include "backends/cuda/cuda_check.h"
#include "core/errors.h"

namespace tensoracle::backends::cuda {
namespace {

constexpr char kFamilyName[] = "kernel.attention";
constexpr size_t kScoresBudget = size_t{256} << 20;  // S and P of one chunk, at most (unless one matrix is larger)
constexpr size_t kGemmWorkspace = size_t{4} << 20;
constexpr size_t kRegionAlignment = 256;

size_t align_up(size_t n) { return (n + kRegionAlignment - 1) / kRegionAlignment * kRegionAlignment; }

// The output's batch dims split into an inner strided group and an outer loop.
struct BatchSplit {
  int64_t inner = 1;                        // matrices of the inner group
  int64_t q_stride = 0, k_stride = 0, v_stride = 0;  // elements between matrices of the group
  int outer_rank = 0;
  int64_t outer_shape[Dims::kMaxRank] = {};
  int64_t outer_q[Dims::kMaxRank] = {}, outer_k[Dims::kMaxRank] = {}, outer_v[Dims::kMaxRank] = {};

  int64_t outer_count() const {
    int64_t n = 1;
    for (int d = 0; d < outer_rank; ++d) n *= outer_shape[d];
    return n;
  }
};

BatchSplit split_batch(const AttentionProblem& p) {
  const std::vector<int64_t> sq = p.batch_strides(p.q), sk = p.batch_strides(p.k), sv = p.batch_strides(p.v);
  std::vector<size_t> dims;  // batch dims of size > 1 (size-1 dims never move a pointer)
  for (size_t d = 0; d < p.batch.rank(); ++d)
    if (p.batch[d] != 1) dims.push_back(d);
  BatchSplit split;
  if (dims.empty()) return split;
  // Grow the group outwards from the innermost dim while every operand keeps one stride:
  // merging dim d above the group's outermost dim g needs stride[d] == stride[g] * size[g].
  size_t first = dims.size() - 1;
  const size_t innermost = dims.back();
  split.inner = p.batch[innermost];
  split.q_stride = sq[innermost];
  split.k_stride = sk[innermost];
  split.v_stride = sv[innermost];
  while (first > 0) {
    const size_t d = dims[first - 1], g = dims[first];
    const int64_t size = p.batch[g];
    if (sq[d] != sq[g] * size || sk[d] != sk[g] * size || sv[d] != sv[g] * size) break;
    split.inner *= p.batch[d];
    --first;
  }
  for (size_t i = 0; i < first; ++i) {
    const size_t d = dims[i];
    split.outer_shape[split.outer_rank] = p.batch[d];
    split.outer_q[split.outer_rank] = sq[d];
    split.outer_k[split.outer_rank] = sk[d];
    split.outer_v[split.outer_rank] = sv[d];
    ++split.outer_rank;
  }
  return split;
}

// Everything run() needs, derived from the step's shapes.
struct ComposedPlan {
  AttentionProblem problem;
  BatchSplit split;
  int64_t chunk = 1;            // matrices per pass (divides split.inner)
  bool probs_in_place = false;  // fp32: P overwrites S
  size_t probs_offset = 0, gemm_workspace_offset = 0, workspace_bytes = 0;
  MaskKind mask_kind = MaskKind::kNone;
  TensorGeometry mask_geometry;

  bool output_empty() const { return problem.batch_count() == 0 || problem.lq == 0 || problem.dv == 0; }
  // Lk = 0: every weight row is empty and the reference's output is 0.
  bool zero_output() const { return !output_empty() && problem.lk == 0; }
};

Result<ComposedPlan> plan_for(const StepInstance& step) {
  ComposedPlan plan;
  TO_ASSIGN_OR_RETURN(plan.problem, describe_attention(step));
  const AttentionProblem& p = plan.problem;
  plan.split = split_batch(p);
  if (plan.output_empty() || plan.zero_output()) return plan;

  const size_t esize = data_type_size(p.dtype);
  plan.probs_in_place = p.dtype == DataType::kFloat32;
  const int64_t bytes_per_score = 4 + (plan.probs_in_place ? 0 : static_cast<int64_t>(esize));  // S, and P apart
  const std::optional<int64_t> matrix = checked_mul(p.lq, p.lk);
  const std::optional<int64_t> matrix_bytes = matrix ? checked_mul(*matrix, bytes_per_score) : std::nullopt;
  if (!matrix_bytes) return unsupported("layer '{}': scores of {} x {} overflow", p.layer, p.lq, p.lk);
  // The largest divisor of the group that fits the budget (one matrix at least).
  const int64_t fits = std::max<int64_t>(1, static_cast<int64_t>(kScoresBudget) / std::max<int64_t>(1, *matrix_bytes));
  for (int64_t c = std::min(fits, plan.split.inner); c >= 1; --c)
    if (plan.split.inner % c == 0) {
      plan.chunk = c;
      break;
    }
  const size_t scores_bytes = align_up(static_cast<size_t>(plan.chunk * *matrix) * 4);
  const size_t probs_bytes = plan.probs_in_place ? 0 : align_up(static_cast<size_t>(plan.chunk * *matrix) * esize);
  plan.probs_offset = plan.probs_in_place ? 0 : scores_bytes;
  plan.gemm_workspace_offset = scores_bytes + probs_bytes;
  plan.workspace_bytes = plan.gemm_workspace_offset + kGemmWorkspace;

  if (p.has_mask) {
    plan.mask_kind = p.bool_mask() ? MaskKind::kBool : MaskKind::kAdditive;
    DeviceTensor mask{p.mask_dtype, p.mask, Layout::kLinear, nullptr};
    TO_ASSIGN_OR_RETURN(plan.mask_geometry, broadcast_geometry(mask, p.scores_shape()));
  }
  return plan;
}

class ComposedAttentionTactic final : public CudaTactic {
 public:
  std::string name() const override { return kFamilyName; }

  size_t workspace_size(const StepInstance& step) const override {
    const Result<ComposedPlan> plan = plan_for(step);
    return plan.is_ok() ? plan->workspace_bytes : 0;
  }

  Status initialize(const StepInstance& step, const RunContext& ctx) override {
    plan_.reset();
    TO_ASSIGN_OR_RETURN(ComposedPlan plan, plan_for(step));
    const AttentionProblem& p = plan.problem;
    if (!plan.output_empty() && !plan.zero_output()) {
      if (p.d > 0) {
        BatchedGemmShape scores{p.dtype, DataType::kFloat32, p.lq, p.lk, p.d, /*b_transposed=*/true, plan.chunk,
                                plan.split.q_stride, plan.split.k_stride, p.lq * p.lk};
        TO_RETURN_IF_ERROR(scores_gemm_.initialize(ctx.cublaslt, scores, kGemmWorkspace));
      }
      BatchedGemmShape output{p.dtype, p.dtype, p.lq, p.dv, p.lk, /*b_transposed=*/false, plan.chunk,
                              p.lq * p.lk, plan.split.v_stride, p.lq * p.dv};
      TO_RETURN_IF_ERROR(output_gemm_.initialize(ctx.cublaslt, output, kGemmWorkspace));
    }
    plan_ = std::move(plan);
    return Status::ok();
  }

  Status run(const StepInstance&, const StepBuffers& buffers, const RunContext& ctx) override {
    if (!plan_) return make_error(StatusCode::kInternal, "{}: run before initialize", kFamilyName);
    const ComposedPlan& plan = *plan_;
    const AttentionProblem& p = plan.problem;
    if (plan.output_empty()) return Status::ok();
    if (buffers.inputs.size() < (p.has_mask ? 4u : 3u) || buffers.outputs.size() != 1)
      return make_error(StatusCode::kInternal, "layer '{}': {} got {} inputs and {} outputs", p.layer, kFamilyName,
                        buffers.inputs.size(), buffers.outputs.size());
    char* out = static_cast<char*>(buffers.outputs[0].data);
    const size_t esize = data_type_size(p.dtype);
    if (plan.zero_output()) {
      TO_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(out, 0, static_cast<size_t>(p.batch_count() * p.lq * p.dv) * esize, ctx.stream));
      return Status::ok();
    }
    if (buffers.workspace_bytes < plan.workspace_bytes)
      return make_error(StatusCode::kInternal, "layer '{}': {} needs {} workspace bytes, got {}", p.layer, kFamilyName,
                        plan.workspace_bytes, buffers.workspace_bytes);

    const char* q = static_cast<const char*>(buffers.inputs[0].data);
    const char* k = static_cast<const char*>(buffers.inputs[1].data);
    const char* v = static_cast<const char*>(buffers.inputs[2].data);
    char* workspace = static_cast<char*>(buffers.workspace);
    float* scores = reinterpret_cast<float*>(workspace);
    void* probs = workspace + plan.probs_offset;
    void* gemm_workspace = workspace + plan.gemm_workspace_offset;

    MaskedSoftmaxArgs softmax;
    softmax.scores = scores;
    softmax.probs = probs;
    softmax.probs_type = p.dtype;
    softmax.rows = plan.chunk * p.lq;
    softmax.lq = p.lq;
    softmax.lk = p.lk;
    softmax.scale = static_cast<float>(p.scale);
    softmax.causal = p.causal;
    softmax.mask_kind = plan.mask_kind;
    softmax.mask = p.has_mask ? buffers.inputs[3].data : nullptr;
    softmax.mask_geometry = plan.mask_geometry;

    const BatchSplit& split = plan.split;
    const int64_t outer = split.outer_count();
    for (int64_t o = 0; o < outer; ++o) {
      int64_t q_offset = 0, k_offset = 0, v_offset = 0;
      for (int64_t rest = o, d = split.outer_rank - 1; d >= 0; --d) {
        const int64_t c = rest % split.outer_shape[d];
        rest /= split.outer_shape[d];
        q_offset += c * split.outer_q[d];
        k_offset += c * split.outer_k[d];
        v_offset += c * split.outer_v[d];
      }
      for (int64_t first = 0; first < split.inner; first += plan.chunk) {
        const int64_t batch_index = o * split.inner + first;
        const char* q_chunk = q + (q_offset + first * split.q_stride) * esize;
        const char* k_chunk = k + (k_offset + first * split.k_stride) * esize;
        const char* v_chunk = v + (v_offset + first * split.v_stride) * esize;
        if (p.d > 0) {
          TO_RETURN_IF_ERROR(scores_gemm_.run(ctx.cublaslt, q_chunk, k_chunk, scores, gemm_workspace, ctx.stream));
        } else {  // an empty dot product: every score is 0
          TO_CUDA_RETURN_IF_ERROR(
              cudaMemsetAsync(scores, 0, static_cast<size_t>(plan.chunk * p.lq * p.lk) * sizeof(float), ctx.stream));
        }
        softmax.first_row = batch_index * p.lq;
        TO_RETURN_IF_ERROR(launch_masked_softmax(softmax, ctx.stream));
        char* out_chunk = out + batch_index * p.lq * p.dv * static_cast<int64_t>(esize);
        TO_RETURN_IF_ERROR(output_gemm_.run(ctx.cublaslt, probs, v_chunk, out_chunk, gemm_workspace, ctx.stream));
      }
    }
    return Status::ok();
  }

 private:
  std::optional<ComposedPlan> plan_;
  BatchedGemm scores_gemm_, output_gemm_;
};

class ComposedAttentionFamily final : public TacticFamily {
 public:
  std::string name() const override { return kFamilyName; }

  Status can_implement(const StepInstance& step, const DeviceInfo&) const override { return plan_for(step).status(); }

  Result<std::vector<std::unique_ptr<CudaTactic>>> candidates(const StepInstance& step, const RunContext&,
                                                              int) const override {
    TO_RETURN_IF_ERROR(can_implement(step, DeviceInfo{}));
    std::vector<std::unique_ptr<CudaTactic>> out;
    out.push_back(std::make_unique<ComposedAttentionTactic>());
    return out;
  }

  Result<std::unique_ptr<CudaTactic>> replay(const StepInstance& step, const nlohmann::json& choice) const override {
    TO_RETURN_IF_ERROR(can_implement(step, DeviceInfo{}));
    if (!choice.is_null() && !(choice.is_object() && choice.empty()))
      return invalid_argument("layer '{}': {} records no choice, got {}", step.anchor.node.name, kFamilyName, choice.dump());
    return std::unique_ptr<CudaTactic>(std::make_unique<ComposedAttentionTactic>());
  }
};

}  // namespace

std::shared_ptr<const TacticFamily> make_composed_attention_family() { return std::make_shared<ComposedAttentionFamily>(); }

}  // namespace tensoracle::backends::cuda
