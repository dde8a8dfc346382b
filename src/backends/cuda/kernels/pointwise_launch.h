// Running a PointwiseProgram (pointwise_program.h) on device tensors: the kernel.pointwise
// family uses it for fused chains, and any tactic may use it to apply a program whose input 0 is
// a tensor it has already written (an epilogue its library could not fuse).
//
//   // initialize(): host work once per shape
//   TO_ASSIGN_OR_RETURN(launch_, PointwiseLaunch::prepare(program, layouts, output_desc, Layout::kLinear));
//   // run(): launch only
//   const void* in[] = {anchor_output, bias};
//   TO_RETURN_IF_ERROR(launch_.run(in, output, ctx.stream));
//
// The output may alias input 0 when both have the same shape, type and layout (each element is
// read before it is written, by the same thread); never where a final quantize writes one byte
// for each element of a wider input (a thread's bytes would overlap another's unread input).
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "backends/cuda/device_tensor.h"
#include "backends/cuda/kernels/pointwise_kernel.h"

namespace tensoracle::backends::cuda {

class PointwiseLaunch {
 public:
  static constexpr int kDefaultThreads = 256;

  // ok, or kUnsupported saying why the kernel cannot hold `program` (more than 16 inputs or 32
  // instructions, malformed registers).
  static Status check(const PointwiseProgram& program);

  // The launch of `program` writing `output` (stored in `output_layout`), its inputs stored in
  // `input_layouts` (one per program input; missing entries mean linear) and broadcast to the
  // output's shape. The output's type must be the program's result type.
  static Result<PointwiseLaunch> prepare(const PointwiseProgram& program, const std::vector<Layout>& input_layouts,
                                         const TensorDesc& output, Layout output_layout,
                                         int threads = kDefaultThreads);

  // Launches on `stream`: `inputs` holds one device pointer per program input.
  Status run(const void* const* inputs, void* output, cudaStream_t stream) const;

  int num_inputs() const { return args_.num_inputs; }
  bool computes_in_fp64() const { return args_.fp64; }
  // The merged iteration rank (0 or 1: the flat path). Dims are walked in the output's storage
  // order (a channels-last output iterates N, H, W, C), size-1 dims dropped, neighbours that every
  // tensor walks as one merged.
  int merged_rank() const { return args_.rank; }
  // The merged arguments (shape, strides, kept slots), for tests and logs.
  const PointwiseKernelArgs& args() const { return args_; }
  // The kernel run() launches for these pointers: the vector kernel where the geometry and the
  // types allow it and the output is 16-byte aligned (kFlat when every contiguous input is
  // aligned too, else kStrided; see pointwise_kernel.h); else the interpreter (kNone). They all
  // compute the same bits.
  PointwiseVector vector_path(const void* const* inputs, const void* output) const;

 private:
  PointwiseKernelArgs args_;
  int threads_ = kDefaultThreads;
};

// How the vector kernel on `vector` (kFlat or kStrided) reads input k of `args` at `pointer`
// (PointwiseInput in pointwise_kernel.h): whole 16-byte vectors only where its type, stride,
// innermost extent, pointer and every outer stride allow.
PointwiseInput plan_vector_input(const PointwiseKernelArgs& args, PointwiseVector vector, int k, const void* pointer);

// prepare + run in one call, for callers outside the hot path (it does host work each time).
Status launch_pointwise_program(const PointwiseProgram& program, const std::vector<DeviceTensor>& inputs,
                                const DeviceTensor& output, cudaStream_t stream);

}  // namespace tensoracle::backends::cuda
