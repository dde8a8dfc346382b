// The two tactic families for OpKind::kAttention (docs/cuda-attention.md), in preference order
// (op_families.h registers them):
//
// - "cudnn.sdpa": cuDNN's fused flash attention (cudnn-frontend graph API). fp16/bf16, head dims
//   multiples of 8, an additive mask or none, causal; q, k, v sharing their batch dims except
//   that k and v may have one head for all of q's (multi-query attention).
// - "kernel.attention": the composed path for everything the CPU reference accepts:
//   S = q k^T (cuBLASLt, fp32 accumulation) -> masked softmax kernel -> y = P v (cuBLASLt).
#pragma once

#include <memory>

#include "backends/cuda/cuda_tactic.h"

namespace tensoracle::backends::cuda {

std::shared_ptr<const TacticFamily> make_cudnn_sdpa_family();
std::shared_ptr<const TacticFamily> make_composed_attention_family();

}  // namespace tensoracle::backends::cuda
