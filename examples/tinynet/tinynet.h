// tinynet: a small residual CNN (conv, batch norm, relu, max pool, residual add, global average
// pool, linear, softmax) defined against PyTorch state_dict names. The PyTorch module it mirrors
// is in scripts/gen-example-models.py.
//
// Besides the module as PyTorch computes it, the graph comes in the forms the four-stage workflow
// example (examples/tinynet/pipeline.toml, docs/workflow.md) needs: lower precisions (stage 2), a
// replacement that computes the same function with other standard layers (stage 3), and a
// deliberately heavier equivalent (stage 4's candidate that must miss the speed target).
#pragma once

#include "tensoracle/network.h"
#include "tensoracle/safetensors.h"

namespace tinynet {

inline constexpr const char* kInput = "image";  // fp32 [N, 3, H, W]; N, H, W may be dynamic
inline constexpr const char* kOutput = "probs";  // fp32 [N, 10]

enum class Variant {
  kModule,       // layer for layer as the PyTorch module
  // The same function from other standard layers: max pool before the stem's relu (relu and max
  // commute exactly, and the relu then touches a quarter of the values) and the global average
  // pool as a mean reduction over H and W (no reshape). Bit-for-bit the module's result on the
  // reference backend up to the order of the pool's fp64 sum.
  kRecomposed,
  // The module with every convolution computed four times and averaged, ((a + b) + (c + d)) / 4:
  // exactly the module's result (the four are equal, and doubling and quartering are exact), for
  // four times the convolution work.
  kRedundant,
};

// Defines the network; returns the first definition error (for example a missing weight).
// `precision` (fp32, fp16 or bf16) is the type every layer computes in: the image and every
// weight are cast to it right after they are read and the probabilities cast back to fp32, so
// the engine's I/O is fp32 whatever the precision.
tensoracle::Status define(tensoracle::Network& net, const tensoracle::Weights& weights,
                          tensoracle::Dims input_shape = {-1, 3, 16, 16},
                          tensoracle::DataType precision = tensoracle::DataType::kFloat32,
                          Variant variant = Variant::kModule);

}  // namespace tinynet
