// "kernel.attention": attention as three launches per group of matrices,
//   S = q k^T (fp32) -> P = masked softmax(S) (the input type) -> y = P v,
// with S and P in the step's workspace. Batch dims broadcast as the CPU reference allows: the
// innermost batch dims over which q, k and v each advance by one stride form one strided-batched
// GEMM (a broadcast operand has stride 0); the dims outside them are walked by a host loop of
// launches. S and P are bounded by kScoresBudget: a group larger than that runs in chunks.
// The products are the shared LtGemm (cublaslt/lt_gemm.h): fp32 accumulation, never TF32.
#include <algorithm>
#include <optional>

#include "backends/cuda/attention/attention_families.h"
#include "backends/cuda/attention/attention_problem.h"
#include "backends/cuda/attention/masked_softmax.h"
#include "backends/cuda/cublaslt/lt_gemm.h"
#include "backends/cuda/cuda_check.h"
#include "core/errors.h"

namespace tensoracle::backends::cuda {
namespace {

constexpr char kFamilyName[] = "kernel.attention";
constexpr size_t kScoresBudget = size_t{256} << 20;  // S and P of one chunk, at most (unless one matrix is larger)
constexpr size_t kRegionAlignment = 256;
constexpr uint32_t kAssumedBaseAlignment = 16;  // bytes; every planned buffer is at least this aligned

size_t align_up(size_t n) { return (n + kRegionAlignment - 1) / kRegionAlignment * kRegionAlignment; }

// The largest power of two <= `alignment` dividing `byte_offset`.
uint32_t alignment_of(int64_t byte_offset, uint32_t alignment) {
  while (alignment > 1 && byte_offset % alignment != 0) alignment /= 2;
  return alignment;
}

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
  size_t probs_offset = 0, gemm_workspace_offset = 0;
  uint32_t pointer_alignment = kAssumedBaseAlignment;  // of every operand pointer the GEMMs get
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
  if (!p.all_linear())
    return unsupported("layer '{}': kernel.attention reads and writes linear tensors only (cudnn.sdpa takes bshd)", p.layer);
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
  // Operand pointers run() derives: chunk starts within the group and outer-loop offsets.
  const BatchSplit& split = plan.split;
  const int64_t e = static_cast<int64_t>(esize);
  for (int64_t stride : {split.q_stride, split.k_stride, split.v_stride, p.lq * p.dv})
    plan.pointer_alignment = alignment_of(plan.chunk * stride * e, plan.pointer_alignment);
  for (int d = 0; d < split.outer_rank; ++d)
    for (int64_t stride : {split.outer_q[d], split.outer_k[d], split.outer_v[d]})
      plan.pointer_alignment = alignment_of(stride * e, plan.pointer_alignment);
  plan.pointer_alignment = alignment_of(split.inner * p.lq * p.dv * e, plan.pointer_alignment);

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

  // Before initialize the GEMMs' workspace is not known yet: LtGemm's limit stands in for it.
  size_t workspace_size(const StepInstance& step) const override {
    const Result<ComposedPlan> plan = plan_for(step);
    if (!plan.is_ok() || plan->output_empty() || plan->zero_output()) return 0;
    const auto same = [](const AttentionProblem& a, const AttentionProblem& b) {
      return a.dtype == b.dtype && a.q == b.q && a.k == b.k && a.v == b.v && a.mask == b.mask;
    };
    if (plan_ && output_gemm_ && same(plan_->problem, plan->problem))
      return plan->gemm_workspace_offset + gemm_workspace();
    return plan->gemm_workspace_offset + kLtWorkspaceLimit;
  }

  Status initialize(const StepInstance& step, const RunContext& ctx) override {
    plan_.reset();
    scores_gemm_.reset();
    output_gemm_.reset();
    TO_ASSIGN_OR_RETURN(ComposedPlan plan, plan_for(step));
    const AttentionProblem& p = plan.problem;
    if (!plan.output_empty() && !plan.zero_output()) {
      LtGemmDesc scores;  // S = q k^T, fp32
      scores.input_type = p.dtype;
      scores.output_type = DataType::kFloat32;
      scores.m = p.lq;
      scores.n = p.lk;
      scores.k = p.d;
      scores.transpose_b = true;  // k is stored [lk, d]
      scores.batch_count = plan.chunk;
      scores.batch_stride_a = plan.split.q_stride;
      scores.batch_stride_b = plan.split.k_stride;
      scores.batch_stride_c = scores.batch_stride_d = p.lq * p.lk;
      scores.pointer_alignment = plan.pointer_alignment;
      if (p.d > 0) {
        TO_ASSIGN_OR_RETURN(scores_gemm_, LtGemm::create(ctx.cublaslt, scores));
      }
      LtGemmDesc output;  // y = P v
      output.input_type = output.output_type = p.dtype;
      output.m = p.lq;
      output.n = p.dv;
      output.k = p.lk;
      output.batch_count = plan.chunk;
      output.batch_stride_a = p.lq * p.lk;
      output.batch_stride_b = plan.split.v_stride;
      output.batch_stride_c = output.batch_stride_d = p.lq * p.dv;
      output.pointer_alignment = plan.pointer_alignment;
      TO_ASSIGN_OR_RETURN(output_gemm_, LtGemm::create(ctx.cublaslt, output));
    }
    plan_ = std::move(plan);
    return Status::ok();
  }

  Status run(const StepInstance&, const StepBuffers& buffers, const RunContext& ctx) override {
    TO_ASSERT(plan_.has_value());  // the runtime initializes every tactic before it runs
    const ComposedPlan& plan = *plan_;
    const AttentionProblem& p = plan.problem;
    if (plan.output_empty()) return Status::ok();
    TO_ASSERT(buffers.inputs.size() >= (p.has_mask ? 4u : 3u) && buffers.outputs.size() == 1);  // q, k, v (, mask), o
    char* out = static_cast<char*>(buffers.outputs[0].data);
    const size_t esize = data_type_size(p.dtype);
    if (plan.zero_output()) {
      TO_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(out, 0, static_cast<size_t>(p.batch_count() * p.lq * p.dv) * esize, ctx.stream));
      return Status::ok();
    }
    const size_t needed = plan.gemm_workspace_offset + gemm_workspace();
    if (buffers.workspace_bytes < needed)
      return make_error(StatusCode::kInternal, "layer '{}': {} needs {} workspace bytes, got {}", p.layer, kFamilyName,
                        needed, buffers.workspace_bytes);

    const char* q = static_cast<const char*>(buffers.inputs[0].data);
    const char* k = static_cast<const char*>(buffers.inputs[1].data);
    const char* v = static_cast<const char*>(buffers.inputs[2].data);
    char* workspace = static_cast<char*>(buffers.workspace);
    float* scores = reinterpret_cast<float*>(workspace);
    void* probs = workspace + plan.probs_offset;
    void* gemm_workspace = workspace + plan.gemm_workspace_offset;
    const size_t gemm_workspace_bytes = buffers.workspace_bytes - plan.gemm_workspace_offset;

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
          LtGemmArgs args;
          args.a = q_chunk;
          args.b = k_chunk;
          args.d = scores;
          TO_RETURN_IF_ERROR(scores_gemm_->run(ctx.cublaslt, args, ctx.stream, gemm_workspace, gemm_workspace_bytes));
        } else {  // an empty dot product: every score is 0
          TO_CUDA_RETURN_IF_ERROR(
              cudaMemsetAsync(scores, 0, static_cast<size_t>(plan.chunk * p.lq * p.lk) * sizeof(float), ctx.stream));
        }
        softmax.first_row = batch_index * p.lq;
        TO_RETURN_IF_ERROR(launch_masked_softmax(softmax, ctx.stream));
        char* out_chunk = out + batch_index * p.lq * p.dv * static_cast<int64_t>(esize);
        LtGemmArgs args;
        args.a = probs;
        args.b = v_chunk;
        args.d = out_chunk;
        TO_RETURN_IF_ERROR(output_gemm_->run(ctx.cublaslt, args, ctx.stream, gemm_workspace, gemm_workspace_bytes));
      }
    }
    return Status::ok();
  }

 private:
  size_t gemm_workspace() const {
    return std::max(scores_gemm_ ? scores_gemm_->workspace_size() : 0, output_gemm_ ? output_gemm_->workspace_size() : 0);
  }

  std::optional<ComposedPlan> plan_;
  std::unique_ptr<LtGemm> scores_gemm_, output_gemm_;  // no scores_gemm_ when d = 0
};

class ComposedAttentionFamily final : public TacticFamily {
 public:
  std::string name() const override { return kFamilyName; }
  bool is_reference() const override { return true; }

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
