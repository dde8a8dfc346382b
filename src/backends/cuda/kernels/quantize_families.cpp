// kernel.quantize and kernel.dequantize: per-tensor or per-channel scales; int8 and fp8 e4m3
// on the quantized side, fp32/fp16/bf16 on the other; linear tensors, or, with one scale, rank-4
// input and output both channels-last (the kernel is elementwise then; plan_layouts.h proposes
// it next to Q/DQ-fused convolutions, which read and write their quantized tensors so).
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/pointwise_families.h"
#include "backends/cuda/kernels/quantize_args.h"
#include "graph/attributes.h"
#include "graph/op_def.h"

namespace tensoracle::backends::cuda {

namespace {

bool is_quantized(DataType t) { return t == DataType::kInt8 || t == DataType::kFloat8E4M3; }

}  // namespace

Result<QuantizeArgs> quantize_args_of(const Node& node, const TensorDesc& input, const TensorDesc& scale_desc,
                                      DataType out_type) {
  const bool dequantize = node.kind == OpKind::kDequantize;
  const Dims& x = input.shape;
  const Dims& s = scale_desc.shape;
  QuantizeArgs a;
  a.dequantize = dequantize;
  a.count = elements_in(x);
  a.in_type = input.dtype;
  a.scale_type = scale_desc.dtype;
  a.out_type = out_type;
  const bool per_channel = s.rank() == 1 && s[0] != 1;
  if (!per_channel) {
    if (elements_in(s) != 1) return invalid_argument("scale {} is neither one value nor per-channel", s.to_string());
    return a;
  }
  int64_t axis_attribute = 0;
  if (dequantize) {
    TO_ASSIGN_OR_RETURN(const DequantizeAttributes* attrs, graph::attributes_of<DequantizeAttributes>(node));
    axis_attribute = attrs->axis;
  } else {
    TO_ASSIGN_OR_RETURN(const QuantizeAttributes* attrs, graph::attributes_of<QuantizeAttributes>(node));
    axis_attribute = attrs->axis;
  }
  TO_ASSIGN_OR_RETURN(const int64_t axis, graph::axis_of(node, axis_attribute, x.rank()));
  if (x[axis] != s[0]) return invalid_argument("scale {} does not match dim {} of {}", s.to_string(), axis, x.to_string());
  a.channels = s[0];
  for (size_t d = static_cast<size_t>(axis) + 1; d < x.rank(); ++d) a.inner *= x[d];
  if (a.inner == 0) a.inner = 1;  // an empty tensor: nothing runs
  return a;
}

namespace {

Result<QuantizeArgs> quantize_args(const StepInstance& step, bool) {
  return quantize_args_of(step.anchor.node, *step.anchor.inputs[0], *step.anchor.inputs[1], step.outputs[0].dtype);
}

class QuantizeTactic final : public KernelTactic {
 public:
  QuantizeTactic(const char* family, bool dequantize) : KernelTactic(family, ""), dequantize_(dequantize) {}
  Status initialize(const StepInstance& step, const RunContext&) override {
    initialized_ = false;
    TO_ASSIGN_OR_RETURN(args_, quantize_args(step, dequantize_));
    initialized_ = true;
    return Status::ok();
  }
  Status run(const StepInstance&, const StepBuffers& buffers, const RunContext& ctx) override {
    TO_RETURN_IF_ERROR(require_initialized());
    return cuda_status(
        launch_quantize(buffers.inputs[0].data, buffers.inputs[1].data, buffers.outputs[0].data, args_, ctx.stream),
        dequantize_ ? "dequantize kernel" : "quantize kernel");
  }

 private:
  bool dequantize_;
  QuantizeArgs args_;
};

class QuantizeFamily final : public KernelFamily {
 public:
  QuantizeFamily(const char* name, bool dequantize) : KernelFamily(name), name_(name), dequantize_(dequantize) {}
  FamilyTraits traits(const Node&) const override {
    FamilyTraits t;
    t.nhwc = true;
    return t;
  }

  Status can_implement(const StepInstance& step, const DeviceInfo& device) const override {
    TO_RETURN_IF_ERROR(check_layer(step, /*allow_nhwc=*/true, /*any_type=*/true));
    if (step.anchor.inputs.size() < 2 || !step.anchor.inputs[0] || !step.anchor.inputs[1])
      return refuse(step, "needs an input and a scale");
    const auto layout_at = [](const std::vector<Layout>& v, size_t i) { return i < v.size() ? v[i] : Layout::kLinear; };
    const Layout in_layout = layout_at(step.input_layouts, 0), out_layout = layout_at(step.output_layouts, 0);
    if ((in_layout != Layout::kLinear || out_layout != Layout::kLinear) &&
        (in_layout != out_layout || elements_in(step.anchor.inputs[1]->shape) != 1))
      return refuse(step, "channels-last tensors need one scale and the same layout in and out (input {}, output {})",
                    layout_name(in_layout), layout_name(out_layout));
    const DataType in = step.anchor.inputs[0]->dtype, scale = step.anchor.inputs[1]->dtype, out = step.outputs[0].dtype;
    const DataType wide = dequantize_ ? out : in, narrow = dequantize_ ? in : out;
    if (!is_kernel_float(wide)) return refuse(step, "floating side is {} (takes fp32, fp16, bf16)", data_type_name(wide));
    if (!is_quantized(narrow)) return refuse(step, "quantized side is {} (takes int8, fp8e4m3)", data_type_name(narrow));
    if (!is_kernel_float(scale)) return refuse(step, "scale type {} (takes fp32, fp16, bf16)", data_type_name(scale));
    if (narrow == DataType::kFloat8E4M3 && device.compute_capability() < 89)
      return refuse(step, "fp8 e4m3 needs compute capability 8.9 or newer, this GPU has {}.{}", device.cc_major,
                    device.cc_minor);
    auto args = quantize_args(step, dequantize_);
    if (!args.is_ok()) return refuse(step, "{}", args.status().message());
    return Status::ok();
  }

 protected:
  std::unique_ptr<CudaTactic> make(const std::string&) const override {
    return std::make_unique<QuantizeTactic>(name_, dequantize_);
  }

 private:
  const char* name_;
  bool dequantize_;
};

}  // namespace

std::shared_ptr<const TacticFamily> make_quantize_family() {
  return std::make_shared<QuantizeFamily>("kernel.quantize", false);
}
std::shared_ptr<const TacticFamily> make_dequantize_family() {
  return std::make_shared<QuantizeFamily>("kernel.dequantize", true);
}

}  // namespace tensoracle::backends::cuda
