// resnet50: torchvision's ResNet-50 (v1.5: the stride of a downsampling bottleneck sits on its
// 3x3 convolution) defined against torchvision's state_dict names ("conv1.weight",
// "layer2.0.downsample.1.running_var", "fc.bias", ...). Batch norms stay batch_norm layers: the
// planner folds them into the convolutions. The PyTorch reference is made by
// scripts/gen-model-references.py; docs/models.md describes the package.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tensoracle/network.h"
#include "tensoracle/safetensors.h"

namespace resnet50 {

// torchvision.models.resnet50() by default; smaller values give the same structure at a size a
// CPU test can run (the state_dict names do not change). width and num_classes describe the
// model; the graph takes channel counts from the weights' shapes.
struct Config {
  std::vector<int64_t> blocks = {3, 4, 6, 3};  // bottlenecks per stage (layer1..layer4)
  int64_t width = 64;                          // stem channels and layer1's bottleneck width
  int64_t num_classes = 1000;
  // int8 or fp8e4m3: explicit quantization (docs/quantization.md). Every convolution and the
  // classifier get Q/DQ on their input (per tensor, scale "<layer>.input_scale") and weight (per
  // output channel, "<layer>.weight_scale"); each batch norm is folded into its convolution when
  // the graph is defined (the weight quantized is the folded one, as in TensorRT's explicit
  // quantization), the folded weight and bias being constants "<conv>.folded_weight" and
  // "<conv>.folded_bias". The other layers compute in `precision`.
  std::optional<tensoracle::DataType> quantization;
};

inline constexpr const char* kInput = "image";    // fp32 [N, 3, H, W]; N, H, W may be dynamic
inline constexpr const char* kOutput = "logits";  // fp32 [N, num_classes]

// Defines the network; returns the first definition error (for example a missing weight).
// `precision` (fp32, fp16 or bf16) is the type every layer computes in: the image and every
// weight are cast to it right after they are read, and the logits are cast back to fp32, so the
// engine's I/O is fp32 whatever the precision. With config.quantization the weights must also
// hold the scales (tensoracle calibrate writes them; docs/quantization.md).
tensoracle::Status define(tensoracle::Network& net, const tensoracle::Weights& weights,
                          tensoracle::Dims input_shape = {-1, 3, 224, 224},
                          tensoracle::DataType precision = tensoracle::DataType::kFloat32, const Config& config = {});

}  // namespace resnet50
