// A step is the unit the CUDA backend plans, times and runs: one graph node (the anchor) with
// concrete shapes, plus the pointwise layers fused into it.
//
// - Pointwise anchor (is_pointwise): `program` holds the whole fused chain, anchor included; the
//   step's inputs are program.inputs and its one output is the program's result.
// - Any other anchor: the step's inputs are the anchor's inputs; `program`, when not empty, is
//   the anchor's epilogue: program input 0 is the anchor's output 0 (never written to memory),
//   inputs 1.. are the step's extra inputs, and the step's output 0 is the program's result.
// - A matrix-product anchor may also compute quantize/dequantize layers (FamilyTraits::
//   quantize_fusion): dequantize layers producing its operands (`dequantized`: the step reads their
//   quantized input and scale instead of the operand) and one quantize layer after the epilogue
//   (`requantize`: the step's output 0 is its output). Only families that declare the trait are
//   asked about such a step (accepting_families).
// - A normalization anchor may also write a quantized copy of its output (FamilyTraits::
//   quantized_copy): a per-tensor quantize layer that reads output 0 beside other readers is
//   computed in the step, which writes the anchor's output as output 0 and the codes as output 1,
//   reading the value once.
#pragma once

#include <optional>
#include <vector>

#include "backends/backend.h"
#include "backends/cuda/device_tensor.h"
#include "backends/cuda/pointwise_program.h"

namespace tensoracle::backends::cuda {

// A dequantize layer computed inside the step, ahead of the anchor.
struct FusedDequantize {
  size_t operand = 0;  // the anchor input it produces
  const Node* layer = nullptr;
  const TensorDesc* data = nullptr;   // its quantized input (int8 or fp8)
  const TensorDesc* scale = nullptr;  // its scale
  size_t data_input = 0, scale_input = 0;  // where both are in the step's inputs
  bool constant = false;  // data and scale are constants (a Q/DQ graph's weight): the value it
                          // dequantizes to is the same at every run
};

// A quantize layer computed in the step: last, reading the epilogue's result (or the anchor's
// output) and writing the step's output 0 (a requantize), or beside the anchor, reading its
// output 0 and writing the step's output 1 (a quantized copy).
struct FusedQuantize {
  const Node* layer = nullptr;
  const TensorDesc* scale = nullptr;
  size_t scale_input = 0;  // where the scale is in the step's inputs
  TensorDesc before;       // the value it quantizes (the epilogue's result or the anchor's output)
};

// The quantize/dequantize layers a step computes besides its anchor and pointwise epilogue.
struct FusedQuantization {
  std::vector<FusedDequantize> dequantized;  // by operand, ascending
  std::optional<FusedQuantize> requantize;
  std::optional<FusedQuantize> copy;
  // Such a step reads other tensors than its anchor: the descriptions of its inputs
  // (StepBuffers::inputs order). Empty when it fuses none (the anchor's inputs are the step's).
  std::vector<const TensorDesc*> inputs;
};

struct StepInstance {
  NodeInstance anchor;
  std::vector<Layout> input_layouts;   // per anchor input (pointwise anchors: per program input)
  std::vector<Layout> output_layouts;  // per step output
  std::vector<Layout> extra_input_layouts;  // per epilogue input 1..n (program input i+1)
  PointwiseProgram program;
  // The descriptions of the step's outputs (the anchor's outputs, or the program's result).
  std::vector<TensorDesc> outputs;
  FusedQuantization quantization;
  // What a plugin anchor's plugin is made from: the plugins of the network the step belongs to.
  const PluginRegistry* plugins = nullptr;
  // The build lets fused fp8 GEMMs accumulate in cuBLASLt's fast mode (PlanOptions), so the
  // candidates offered for this step use it. A recorded choice runs as it was recorded.
  bool fp8_fast_accumulation = false;

  bool has_epilogue() const { return !program.empty() && !is_pointwise(anchor.node.kind); }
  // Whether the step computes quantize/dequantize layers of the kinds FamilyTraits::
  // quantize_fusion declares (dequantized operands, a requantize), and whether it computes any.
  bool fuses_quantization() const { return !quantization.dequantized.empty() || quantization.requantize.has_value(); }
  bool computes_quantization() const { return fuses_quantization() || quantization.copy.has_value(); }
};

// Device buffers of one step, in the step's orders.
struct StepBuffers {
  std::vector<DeviceTensor> inputs;        // anchor inputs, or program inputs for pointwise anchors
  std::vector<DeviceTensor> extra_inputs;  // epilogue inputs 1..n
  std::vector<DeviceTensor> outputs;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
};

}  // namespace tensoracle::backends::cuda
