// Inference rewrites the cuda planner applies before it lowers a network (the cpu backend, the
// reference, plans the network as written). Each returns a new network with the same inputs and
// outputs (names, types, shapes); results change only by rounding (documented per pass below).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tensoracle/network.h"

namespace tensoracle::passes {

// Convolution followed by inference batch norm, whose parameters, weight and bias are constants
// (possibly through casts), becomes one convolution with scaled weights and a shifted bias:
// w' = w * s, b' = (b - mean) * s + beta, s = gamma / sqrt(var + eps), computed in fp64 from the
// constants' values before any cast and rounded once to the convolution's weight type.
Result<Network> fold_batch_norm(const Network& network);

// Attention written out as layers -- matmul(softmax(matmul(q, k^T) [* c | / c] [+ mask]), v), the
// softmax over the last axis, c a constant scalar, every intermediate read only by the next layer
// -- becomes one attention layer with scale c (1/c; 1 without one) and that mask. k^T given as a
// transpose of k (an ONNX export's Transpose(0, 2, 3, 1) of the head split) becomes the transpose
// that makes k [..., Lk, d] from the same source, none where the two cancel; a product that
// transposes its second operand reads k directly. Results change by rounding: the attention
// kernel keeps the scores, their scaling, the mask sum and the probabilities in fp32 (the
// reference: fp64) where the layers round each to the network's type. Exported transformers
// (ONNX) then run the fused attention kernels hand-written graphs get.
Result<Network> fuse_attention(const Network& network);

// A cast of a constant becomes a constant of the cast's type (exact rounding to nearest even).
Result<Network> fold_constant_casts(const Network& network);

// A quantize layer of a constant with a constant scale becomes the constant it computes (int8 or
// fp8 e4m3), by the layer's own arithmetic (docs/quantization.md): exact. Q/DQ graphs quantize
// their weights so; folded, a weight is stored quantized and no kernel requantizes it per run.
Result<Network> fold_constant_quantize(const Network& network);

// Quantize layers of one tensor with the same output type, axis and scale values (the same scale
// tensor, or constants with the same bytes) become the first of them: calibration gives every
// quantize layer its own scale, and where two read one tensor (a residual block's conv1 and
// downsample, attention's Q, K and V projections) the values are equal. Exact. A layer whose
// output is a network output is kept.
Result<Network> merge_duplicate_quantize(const Network& network);

// A matrix product of two dequantized operands whose `b` is the dequantization of a constant
// [K, N] matrix read by nothing else, not transposed, reads it transposed instead: the constant
// becomes [N, K] (a new constant "<name>.transposed"), a per-channel dequantize axis follows its
// dim, and the matmul sets transpose_b. Exact (the same values, moved). Quantized GEMMs on tensor
// cores read their weight K-major (cuBLASLt fp8 and int8 take only the "TN" form).
Result<Network> transpose_dequantized_weights(const Network& network);

// An fp32 network computed in fp16 or bf16 with fp32 I/O (docs/precision.md). Every layer whose
// outputs are fp32, whose inputs are fp32 or int32/int64/bool (indices, conditions and masks,
// read in their own types) and whose kind is not kept (`keep_fp32`) computes in `compute`; its
// fp32 constant inputs become `compute` constants (exact rounding to nearest even, once per
// constant and type). Network inputs stay fp32 and outputs are cast back to fp32; a cast is
// inserted only where a kept-fp32 and a converted region meet, and casts fold (a cast of a cast is
// a cast of the original tensor; a cast to the type a tensor already has is no layer). Layers with
// an integer or bool result, a quantized (int8/fp8) or already fp16/bf16 tensor, quantize/
// dequantize layers and their neighbours (so Q/DQ patterns still fuse) and plugin layers are left
// as they are. Results change by the rounding to `compute` of every converted tensor.
// Enters the key of every fp16/bf16 build (BuilderSettings::to_manifest): a pass that converts
// other layers makes another engine. 2: layers reading integer indices or bool conditions convert.
inline constexpr const char* kPrecisionPassVersion = "2";

struct PrecisionOptions {
  DataType compute = DataType::kFloat16;  // kFloat16 or kBFloat16
  // Op kinds ("softmax") or op kinds with their function ("reduce.sum", "unary.exp",
  // "elementwise.pow", "activation.softplus") that stay fp32.
  std::vector<std::string> keep_fp32 = default_keep_fp32();

  static std::vector<std::string> default_keep_fp32();
};

// What the precision pass did: counts for the build log.
struct PrecisionReport {
  size_t converted_layers = 0;
  size_t converted_constants = 0;
  size_t inserted_casts = 0;
  // Casts of the network the pass made part of its own (a cast to fp32, a cast fp32 -> compute
  // type): their readers read the cast's input, cast at most once.
  size_t folded_casts = 0;
  // Layers left in their types, counted by reason ("keep-list reduce.sum", "bool tensor",
  // "plugin", ...).
  std::map<std::string, size_t> kept;
  // One line per fact, for the build log.
  std::vector<std::string> lines(DataType compute) const;
};

// Checks one keep-list entry: an op kind, or an op kind with a function of its table. The error
// names the entry and the names it could have been.
Status check_keep_fp32_entry(const std::string& entry);

Result<Network> convert_precision(const Network& network, const PrecisionOptions& options, PrecisionReport* report = nullptr);

// Only the layers that reach an output (constants a fold left unused disappear from the engine).
Result<Network> remove_dead_layers(const Network& network);

// Every inference pass in order; `log` (if given) receives one line per rewrite.
Result<Network> optimize_for_inference(const Network& network, std::vector<std::string>* log = nullptr);

}  // namespace tensoracle::passes
