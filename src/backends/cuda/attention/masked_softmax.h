// The middle of the composed attention path: scores S = q k^T (fp32, from a GEMM) become the
// attention weights P = softmax(S * scale + mask) row by row, with the CPU reference's rules:
// a bool mask keeps positions where it is non-zero (others -inf), an additive mask is added,
// causal sets keys j > i to -inf (after the mask, as the reference does), and a row with no
// finite score gives NaN (exp(-inf - -inf)). Arithmetic in fp32; P is rounded to its type once.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/cuda/device_tensor.h"
#include "tensoracle/status.h"

namespace tensoracle::backends::cuda {

enum class MaskKind : uint8_t { kNone, kBool, kAdditive };

struct MaskedSoftmaxArgs {
  const float* scores = nullptr;  // [rows, lk], row-major
  void* probs = nullptr;          // [rows, lk] of probs_type; may alias scores when fp32
  DataType probs_type = DataType::kFloat32;  // fp32, fp16 or bf16
  int64_t rows = 0;
  int64_t first_row = 0;  // global index (batch * lq + query) of rows[0], for the mask and causal
  int64_t lq = 0, lk = 0;
  float scale = 1.0f;
  bool causal = false;
  MaskKind mask_kind = MaskKind::kNone;
  const void* mask = nullptr;  // bool (one byte), or probs_type for an additive mask
  TensorGeometry mask_geometry;  // the mask broadcast to the scores [batch..., lq, lk]
};

// Launches on `stream`; nothing when rows or lk is 0.
Status launch_masked_softmax(const MaskedSoftmaxArgs& args, cudaStream_t stream);

}  // namespace tensoracle::backends::cuda
