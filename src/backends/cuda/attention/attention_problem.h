// One attention step (OpKind::kAttention) read the way both attention families need it: the
// operands' shapes, the resolved scale, causal flag and mask, and the batch dims of the output.
// The semantics are the CPU reference's (src/backends/cpu/attention.cpp, docs/ops.md):
//   y = softmax(q k^T * scale + mask) v   over q [..., Lq, D], k [..., Lk, D], v [..., Lk, Dv],
// batch dims broadcast; a bool mask keeps positions where true, any other mask is added; causal
// masks keys j > i (top-left aligned); a fully masked row is NaN; Lk = 0 gives zeros.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/cuda/step.h"

namespace tensoracle::backends::cuda {

struct AttentionProblem {
  std::string layer;  // the node's name, for messages
  DataType dtype = DataType::kFloat32;  // q, k, v and the output
  Dims q, k, v;                         // operand shapes as given (each rank >= 2)
  Dims batch;                           // the output's batch dims (q, k, v broadcast to them)
  int64_t lq = 0, lk = 0, d = 0, dv = 0;
  double scale = 1.0;
  bool causal = false;
  bool has_mask = false;
  DataType mask_dtype = DataType::kBool;  // bool, or the dtype of q (an additive mask)
  Dims mask;                              // broadcasts to scores_shape()
  // q, k, v and the output: linear, or kBshd (rank 4, heads interleaved per position; only
  // cuDNN SDPA reads and writes that, in place of the graph's transposes).
  Layout q_layout = Layout::kLinear, k_layout = Layout::kLinear, v_layout = Layout::kLinear, out_layout = Layout::kLinear;
  bool all_linear() const;

  bool bool_mask() const { return has_mask && mask_dtype == DataType::kBool; }
  int64_t batch_count() const;  // product of `batch` (1 for none)
  Dims scores_shape() const;    // [batch..., lq, lk]
  Dims output_shape() const;    // [batch..., lq, dv]
  // The element strides of `operand` (shape [b..., rows, cols], row-major) for each dim of
  // `batch`, read with numpy broadcasting: 0 where the operand is broadcast.
  std::vector<int64_t> batch_strides(const Dims& operand) const;
};

// Reads `step` and checks what both families require: an attention anchor with q, k, v and
// output linear or kBshd (rank 4), a linear mask, no fused epilogue, static shapes, rank <= 8.
// kUnsupported names the layer and why.
Result<AttentionProblem> describe_attention(const StepInstance& step);

}  // namespace tensoracle::backends::cuda
