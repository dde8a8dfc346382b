#include "backends/cuda/cudnn/conv_epilogue.h"

#include <fmt/format.h>

#include <optional>

#include "core/errors.h"

namespace tensoracle::backends::cuda {

namespace {

std::optional<EpilogueOpKind> epilogue_kind(PointwiseCode code) {
  switch (code) {
    case PointwiseCode::kAdd: return EpilogueOpKind::kAddTensor;
    case PointwiseCode::kMul: return EpilogueOpKind::kMulTensor;
    case PointwiseCode::kRelu: return EpilogueOpKind::kRelu;
    case PointwiseCode::kSigmoid: return EpilogueOpKind::kSigmoid;
    case PointwiseCode::kTanh: return EpilogueOpKind::kTanh;
    case PointwiseCode::kGeluErf: return EpilogueOpKind::kGeluErf;
    case PointwiseCode::kGeluTanh: return EpilogueOpKind::kGeluTanh;
    case PointwiseCode::kSilu: return EpilogueOpKind::kSilu;
    default: return std::nullopt;
  }
}

// `shape` right-aligned to `out` when it broadcasts as a scalar, per channel or not at all.
std::optional<Dims> operand_shape(const Dims& shape, const Dims& out) {
  if (shape.rank() > out.rank()) return std::nullopt;
  std::vector<int64_t> padded(out.rank() - shape.rank(), 1);
  for (size_t d = 0; d < shape.rank(); ++d) padded.push_back(shape[d]);
  bool full = true, channel_only = true;
  for (size_t d = 0; d < out.rank(); ++d) {
    if (padded[d] != out[d] && padded[d] != 1) return std::nullopt;
    full &= padded[d] == out[d];
    if (d != 1) channel_only &= padded[d] == 1;
  }
  if (!full && !channel_only) return std::nullopt;
  return Dims(padded);
}

}  // namespace

Result<ConvEpilogue> conv_epilogue(const StepInstance& step, const ConvProblem& problem) {
  ConvEpilogue epilogue;
  if (!step.has_epilogue()) return epilogue;
  const std::string& name = step.anchor.node.name;
  const PointwiseProgram& program = step.program;
  const DataType type = problem.dtype;
  if (step.outputs.empty() || step.outputs[0].shape != problem.y_shape)
    return unsupported("layer '{}': the fused chain changes the output shape", name);
  if (program.instrs.size() > static_cast<size_t>(EpilogueLaunch::kMaxOps))
    return unsupported("layer '{}': a convolution fuses at most {} pointwise layers", name, EpilogueLaunch::kMaxOps);
  const int inputs = static_cast<int>(program.inputs.size());
  int current = 0;  // the register holding the running value
  for (size_t i = 0; i < program.instrs.size(); ++i) {
    const PointwiseInstr& in = program.instrs[i];
    const std::string what = fmt::format("layer '{}': fused {}", name, program.to_string());
    const auto kind = epilogue_kind(in.code);
    if (!kind) return unsupported("{}: instruction {} is not an add, mul, relu, sigmoid, tanh, gelu or silu", what, i);
    if (in.type != type)
      return unsupported("{}: instruction {} computes {}, the convolution {} (no casts inside)", what, i,
                         data_type_name(in.type), data_type_name(type));
    ConvEpilogueOp op;
    op.kind = *kind;
    if (*kind == EpilogueOpKind::kAddTensor || *kind == EpilogueOpKind::kMulTensor) {
      const int other = in.a == current ? in.b : in.b == current ? in.a : -1;
      if (other < 1 || other >= inputs || other == current)
        return unsupported("{}: instruction {} must combine the running value with one extra input", what, i);
      const TensorDesc& t = program.inputs[static_cast<size_t>(other)];
      if (t.dtype != type)
        return unsupported("{}: extra input {} is {}, not {}", what, other, data_type_name(t.dtype), data_type_name(type));
      const auto shape = operand_shape(t.shape, problem.y_shape);
      if (!shape)
        return unsupported("{}: extra input {} of shape {} is neither a scalar, per-channel nor of the output's shape {}",
                           what, other, t.shape.to_string(), problem.y_shape.to_string());
      op.extra = other - 1;
      op.operand = *shape;
      if (static_cast<size_t>(op.extra) < step.extra_input_layouts.size()) op.layout = step.extra_input_layouts[op.extra];
      if (op.layout == Layout::kNhwc && t.shape != problem.y_shape)
        return unsupported("{}: extra input {} is nhwc but not of the output's shape", what, other);
    } else if (in.a != current) {
      return unsupported("{}: instruction {} does not read the running value", what, i);
    }
    epilogue.ops.push_back(op);
    current = inputs + static_cast<int>(i);
  }
  return epilogue;
}

Status check_buffer_layouts(const StepInstance& step, const ConvProblem& problem, const ConvEpilogue& epilogue,
                            const StepBuffers& buffers) {
  const auto mismatch = [&](const char* what, Layout got, Layout want) {
    return make_error(StatusCode::kFailedPrecondition, "layer '{}': {} is {}, the tactic was prepared for {}",
                      step.anchor.node.name, what, layout_name(got), layout_name(want));
  };
  bool complete = buffers.inputs.size() >= (problem.has_bias ? 3u : 2u) && !buffers.outputs.empty();
  for (const ConvEpilogueOp& op : epilogue.ops)
    if (op.extra >= 0 && static_cast<size_t>(op.extra) >= buffers.extra_inputs.size()) complete = false;
  if (!complete) return make_error(StatusCode::kFailedPrecondition, "layer '{}': missing buffers", step.anchor.node.name);
  if (buffers.inputs[0].layout != problem.x_layout) return mismatch("the input", buffers.inputs[0].layout, problem.x_layout);
  if (buffers.outputs[0].layout != problem.y_layout) return mismatch("the output", buffers.outputs[0].layout, problem.y_layout);
  if (buffers.inputs[1].layout != problem.w_layout)
    return mismatch("the weight", buffers.inputs[1].layout, problem.w_layout);
  for (const ConvEpilogueOp& op : epilogue.ops) {
    if (op.extra < 0) continue;
    const Layout got = buffers.extra_inputs[static_cast<size_t>(op.extra)].layout;
    if (got != op.layout) return mismatch("a fused operand", got, op.layout);
  }
  return Status::ok();
}

EpilogueLaunch epilogue_launch(const ConvProblem& problem, const ConvEpilogue& epilogue, const StepBuffers& buffers,
                               bool with_bias) {
  EpilogueLaunch e;
  if (with_bias && problem.has_bias && buffers.inputs.size() > 2 && buffers.inputs[2].data) {
    e.bias.data = buffers.inputs[2].data;
    e.bias.stride[1] = 1;
  }
  e.count = static_cast<int>(epilogue.ops.size());
  for (size_t i = 0; i < epilogue.ops.size(); ++i) {
    const ConvEpilogueOp& op = epilogue.ops[i];
    e.kind[i] = op.kind;
    if (op.extra < 0) continue;
    e.operand[i].data = buffers.extra_inputs[static_cast<size_t>(op.extra)].data;  // checked by check_buffer_layouts
    const auto strides = canonical_strides(op.operand, op.layout);
    for (int d = 0; d < 5; ++d) e.operand[i].stride[d] = strides[static_cast<size_t>(d)];
  }
  return e;
}

}  // namespace tensoracle::backends::cuda
