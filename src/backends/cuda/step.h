// A step is the unit the CUDA backend plans, times and runs: one graph node (the anchor) with
// concrete shapes, plus the pointwise layers fused into it.
//
// - Pointwise anchor (is_pointwise): `program` holds the whole fused chain, anchor included; the
//   step's inputs are program.inputs and its one output is the program's result.
// - Any other anchor: the step's inputs are the anchor's inputs; `program`, when not empty, is
//   the anchor's epilogue: program input 0 is the anchor's output 0 (never written to memory),
//   inputs 1.. are the step's extra inputs, and the step's output 0 is the program's result.
#pragma once

#include <vector>

#include "backends/backend.h"
#include "backends/cuda/device_tensor.h"
#include "backends/cuda/pointwise_program.h"

namespace tensoracle::backends::cuda {

struct StepInstance {
  NodeInstance anchor;
  std::vector<Layout> input_layouts;   // per anchor input (pointwise anchors: per program input)
  std::vector<Layout> output_layouts;  // per step output
  std::vector<Layout> extra_input_layouts;  // per epilogue input 1..n (program input i+1)
  PointwiseProgram program;
  // The descriptions of the step's outputs (the anchor's outputs, or the program's result).
  std::vector<TensorDesc> outputs;

  bool has_epilogue() const { return !program.empty() && !is_pointwise(anchor.node.kind); }
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
