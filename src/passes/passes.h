// Inference rewrites the cuda planner applies before it lowers a network (the cpu backend, the
// reference, plans the network as written). Each returns a new network with the same inputs and
// outputs (names, types, shapes); results change only by rounding (documented per pass below).
#pragma once

#include <string>
#include <vector>

#include "tensoracle/network.h"

namespace tensoracle::passes {

// Convolution followed by inference batch norm, whose parameters, weight and bias are constants
// (possibly through casts), becomes one convolution with scaled weights and a shifted bias:
// w' = w * s, b' = (b - mean) * s + beta, s = gamma / sqrt(var + eps), computed in fp64 from the
// constants' values before any cast and rounded once to the convolution's weight type.
Result<Network> fold_batch_norm(const Network& network);

// A cast of a constant becomes a constant of the cast's type (exact rounding to nearest even).
Result<Network> fold_constant_casts(const Network& network);

// A quantize layer of a constant with a constant scale becomes the constant it computes (int8 or
// fp8 e4m3), by the layer's own arithmetic (docs/quantization.md): exact. Q/DQ graphs quantize
// their weights so; folded, a weight is stored quantized and no kernel requantizes it per run.
Result<Network> fold_constant_quantize(const Network& network);

// A matrix product of two dequantized operands whose `b` is the dequantization of a constant
// [K, N] matrix read by nothing else, not transposed, reads it transposed instead: the constant
// becomes [N, K] (a new constant "<name>.transposed"), a per-channel dequantize axis follows its
// dim, and the matmul sets transpose_b. Exact (the same values, moved). Quantized GEMMs on tensor
// cores read their weight K-major (cuBLASLt fp8 and int8 take only the "TN" form).
Result<Network> transpose_dequantized_weights(const Network& network);

// Only the layers that reach an output (constants a fold left unused disappear from the engine).
Result<Network> remove_dead_layers(const Network& network);

// Every inference pass in order; `log` (if given) receives one line per rewrite.
Result<Network> optimize_for_inference(const Network& network, std::vector<std::string>* log = nullptr);

}  // namespace tensoracle::passes
