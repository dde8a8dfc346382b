// The pointwise layers a convolution step may fuse (StepInstance::program), read as a straight
// chain on the convolution's result: each instruction takes the running value and, for add and
// mul, one extra input that is a scalar, a per-channel tensor ([K,1,1], [1,K,1,1], ...) or the
// output's exact shape (a residual). Activations: relu, sigmoid, tanh, gelu (erf and tanh forms),
// silu. Every instruction's type must be the output's type (no casts inside); the chain runs in
// fp32 and rounds once at the end. Anything else is refused with the reason, so the planner
// fuses less.
#pragma once

#include <vector>

#include "backends/cuda/cudnn/conv_kernels.h"
#include "backends/cuda/cudnn/conv_problem.h"

namespace tensoracle::backends::cuda {

struct ConvEpilogueOp {
  EpilogueOpKind kind = EpilogueOpKind::kRelu;
  int extra = -1;  // kAddTensor / kMulTensor: index into StepBuffers::extra_inputs
  Dims operand;    // that input's shape right-aligned to the output's rank (1 where broadcast)
  Layout layout = Layout::kLinear;  // that input's layout (StepInstance::extra_input_layouts)
};

struct ConvEpilogue {
  std::vector<ConvEpilogueOp> ops;
  bool empty() const { return ops.empty(); }
};

Result<ConvEpilogue> conv_epilogue(const StepInstance& step, const ConvProblem& problem);

// kFailedPrecondition when a buffer is missing (x, w, the bias when `problem` has one, y, every
// epilogue operand) or its layout is not the one `problem` and `epilogue` were prepared for (x, w,
// y and the epilogue operands). The conv tactics index the buffers unchecked after it.
Status check_buffer_layouts(const StepInstance& step, const ConvProblem& problem, const ConvEpilogue& epilogue,
                            const StepBuffers& buffers);

// The kernels' view of bias + epilogue on these buffers.
EpilogueLaunch epilogue_launch(const ConvProblem& problem, const ConvEpilogue& epilogue, const StepBuffers& buffers,
                               bool with_bias);

}  // namespace tensoracle::backends::cuda
