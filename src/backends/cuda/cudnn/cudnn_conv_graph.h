// A convolution (conv_fprop) or deconvolution (conv_dgrad) as a cuDNN operation graph built with
// cudnn-frontend for one set of concrete shapes, and the engine configurations that can run it.
//
// Fused graphs carry the bias (as a [1,K,1,1] tensor) and the epilogue (conv_epilogue.h) as
// cuDNN pointwise operations on fp32 virtual tensors; unfused graphs are the convolution alone
// (the caller applies bias and epilogue with its own kernel). 1-D convolutions are 2-D ones with
// a size-1 height. Tensors are described with their real strides (linear or nhwc; the weight is
// KCRS or KRSC), so cuDNN picks engines that take them as they are.
//
// Engine filters: configurations needing more than kMaxConvWorkspace bytes are dropped; so are
// those with reduced-precision reductions, and for fp32 every configuration whose numerical
// notes include tensor cores or down-converted inputs (TF32) or FFT / Winograd (fp32 keeps the
// accuracy of a direct fp32 sum).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/cuda/cudnn/conv_epilogue.h"
#include "backends/cuda/cudnn/conv_problem.h"
#include "backends/cuda/cudnn/qconv_plan.h"

struct cudnnContext;

namespace tensoracle::backends::cuda {

inline constexpr int64_t kMaxConvWorkspace = int64_t{256} << 20;

struct CudnnConvPlan {
  int64_t index = -1;  // engine configuration index in the graph's heuristic list
  std::string engine;  // cuDNN's engine tag (engine id and knobs), stable for equal shapes
  int64_t workspace = 0;
};

// What a graph reads besides the step's buffers: x and the weight (the step's own, or the
// padded or dequantized copies in the workspace) and the engine's workspace; `y` where the graph
// writes elsewhere than the step's output 0 (a Q/DQ-fused step's product or accumulator).
struct CudnnConvOperands {
  const void* x = nullptr;
  const void* w = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  void* y = nullptr;  // nullptr: buffers.outputs[0]

  // Precondition: check_buffer_layouts (conv_epilogue.h) passed on `buffers`.
  static CudnnConvOperands of(const StepBuffers& buffers) {
    return {buffers.inputs[0].data, buffers.inputs[1].data, buffers.workspace, buffers.workspace_bytes, nullptr};
  }
};

// Why cuDNN's graph cannot express `problem` at all (checked before building anything): a
// deconvolution whose output padding exceeds what dgrad's padding can absorb, zero channels.
Status cudnn_conv_expressible(const ConvProblem& problem);

class CudnnConvGraph {
 public:
  // Builds and finalizes the operation graph on `handle`.
  static Result<std::shared_ptr<CudnnConvGraph>> build(const ConvProblem& problem, const ConvEpilogue& epilogue,
                                                       bool fused, cudnnContext* handle);
  // The quantized convolution of a Q/DQ-fused step (qconv_plan.h): `plan.packed` has int8 or
  // fp8e4m3 x and w, channels-last. Without `whole_step`, the graph writes the bare accumulator
  // (int32 for int8, fp32 for fp8) packed channels-last, through an identity pointwise operation
  // as cuDNN's own int8 sample does. With it, the graph computes the whole step as pointwise
  // operations on fp32 virtual tensors after the convolution -- x scale, weight scale (one or K),
  // bias, the epilogue, the division by the trailing quantize's scale -- and writes the step's
  // output (the product type, or int8 / fp8 where the step requantizes) in its own layout; the
  // plan's K must then be unpadded. Scales and bias are read from the step inputs the plan names.
  static Result<std::shared_ptr<CudnnConvGraph>> build_quantized(const QuantizedConvPlan& plan, bool whole_step,
                                                                 cudnnContext* handle);
  ~CudnnConvGraph();
  CudnnConvGraph(const CudnnConvGraph&) = delete;
  CudnnConvGraph& operator=(const CudnnConvGraph&) = delete;

  bool fused() const { return fused_; }
  cudnnContext* handle() const { return handle_; }

  // The configurations that build within `max_workspace` bytes, in heuristic order (duplicates
  // removed), at most `limit`.
  Result<std::vector<CudnnConvPlan>> plans(int limit, int64_t max_workspace = kMaxConvWorkspace);
  // The configuration tagged `engine`, built; the first one that builds within `max_workspace`
  // when no tag matches (other shapes can offer other engines) or the tagged one needs more there.
  Result<CudnnConvPlan> plan_for(const std::string& engine, int64_t max_workspace = kMaxConvWorkspace);

  // A variant pack with a slot for every tensor the graph reads or writes (filled by execute).
  std::unordered_map<int64_t, void*> variant_pack() const;
  // Runs `plan` on `stream`: x, w and the workspace from `operands`, bias, epilogue operands and
  // y from `buffers`. `pack` comes from variant_pack() (no allocation here).
  Status execute(const CudnnConvPlan& plan, const CudnnConvOperands& operands, const StepBuffers& buffers,
                 std::unordered_map<int64_t, void*>& pack, cudnnContext* handle, cudaStream_t stream) const;

 private:
  struct Impl;
  CudnnConvGraph() = default;
  std::unique_ptr<Impl> impl_;
  bool fused_ = false;
  cudnnContext* handle_ = nullptr;
};

}  // namespace tensoracle::backends::cuda
