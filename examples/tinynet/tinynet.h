// tinynet: a small residual CNN (conv, batch norm, relu, max pool, residual add, global average
// pool, linear, softmax) defined against PyTorch state_dict names. The PyTorch module it mirrors
// is in scripts/gen-example-models.py.
#pragma once

#include "tensoracle/network.h"
#include "tensoracle/safetensors.h"

namespace tinynet {

inline constexpr const char* kInput = "image";  // fp32 [N, 3, H, W]; N, H, W may be dynamic
inline constexpr const char* kOutput = "probs";  // fp32 [N, 10]

// Defines the network; returns the first definition error (for example a missing weight).
tensoracle::Status define(tensoracle::Network& net, const tensoracle::Weights& weights,
                          tensoracle::Dims input_shape = {-1, 3, 16, 16});

}  // namespace tinynet
