// pad: constant, reflect, replicate or circular padding of the trailing dims.
#include <algorithm>

#include "backends/cpu/kernel.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/data_movement_families.h"
#include "backends/cuda/kernels/pad.h"
#include "graph/attributes.h"
#include "tensoracle/float_formats.h"

namespace tensoracle::backends::cuda {

namespace {

// The kernel's fill modes are PadMode's values (pad.h), so a mode converts by value.
#define TO_SAME_FILL_(Mode, name) \
  static_assert(static_cast<int>(PadFill::k##Mode) == static_cast<int>(PadMode::k##Mode), "PadFill follows PadMode");
TENSORACLE_PAD_MODES(TO_SAME_FILL_)
#undef TO_SAME_FILL_

// The constant as the reference stores it: rounded to the output type by the CPU executor's rule,
// then encoded in that type's bytes.
uint64_t encode_value(double value, DataType type) {
  cpu::round_to_type(type, &value, 1);
  uint64_t bits = 0;
  convert_elements(DataType::kFloat64, &value, type, &bits, 1);
  return bits;
}

class PadTactic final : public KernelTactic {
 public:
  PadTactic() : KernelTactic("kernel.pad", "") {}
  Status initialize(const StepInstance& step, const RunContext&) override {
    TO_ASSIGN_OR_RETURN(const PadAttributes* attrs, graph::attributes_of<PadAttributes>(step.anchor.node));
    const Dims& x = step.anchor.inputs[0]->shape;
    const Dims& y = step.outputs[0].shape;
    const std::vector<int64_t>& pre = attrs->pre;
    if (pre.size() > x.rank() || y.rank() != x.rank())
      return unsupported("layer '{}': pre {} does not cover trailing dims of {}", step.anchor.node.name, Dims(pre).to_string(),
                         x.to_string());
    const std::vector<int64_t> in_strides = element_strides(x, Layout::kLinear);
    args_ = PadArgs{};
    args_.rank = static_cast<int>(y.rank());
    for (size_t d = 0; d < y.rank(); ++d) {
      args_.out_shape[d] = y[d];
      args_.in_shape[d] = x[d];
      args_.in_stride[d] = in_strides[d];
      args_.pre[d] = d + pre.size() >= x.rank() ? pre[d + pre.size() - x.rank()] : 0;
    }
    args_.fill = static_cast<PadFill>(attrs->mode);
    args_.value_bits = encode_value(attrs->value, step.outputs[0].dtype);
    args_.count = elements_in(y);
    element_size_ = data_type_size(step.outputs[0].dtype);
    initialized_ = true;
    return Status::ok();
  }
  Status run(const StepInstance&, const StepBuffers& buffers, const RunContext& ctx) override {
    TO_RETURN_IF_ERROR(require_initialized());
    return cuda_status(launch_pad(buffers.inputs[0].data, buffers.outputs[0].data, element_size_, args_, ctx.stream),
                       "pad kernel");
  }

 private:
  PadArgs args_;
  size_t element_size_ = 0;
};

class PadFamily final : public KernelFamily {
 public:
  PadFamily() : KernelFamily("kernel.pad") {}
  Status can_implement(const StepInstance& step, const DeviceInfo&) const override {
    TO_RETURN_IF_ERROR(check_plain_step(step));
    TO_ASSIGN_OR_RETURN(const PadAttributes* attrs, graph::attributes_of<PadAttributes>(step.anchor.node));
    const Dims& x = step.anchor.inputs[0]->shape;
    const std::vector<int64_t>& pre = attrs->pre;
    const std::vector<int64_t>& post = attrs->post;
    if (pre.size() != post.size() || pre.size() > x.rank() || step.outputs[0].shape.rank() != x.rank())
      return refuse(step, "pre/post do not cover trailing dims of {}", x.to_string());
    const PadMode mode = attrs->mode;
    // The kernel reads one reflection or wrap only; inference enforces these limits, and a
    // kernel beyond them would read out of bounds, so check them again on the concrete shapes.
    for (size_t i = 0; i < pre.size(); ++i) {
      const int64_t n = x[x.rank() - pre.size() + i], most = std::max(pre[i], post[i]);
      const bool fits = most == 0 || mode == PadMode::kConstant || (mode == PadMode::kReflect && most < n) ||
                        (mode == PadMode::kCircular && most <= n) || (mode == PadMode::kReplicate && n > 0);
      if (!fits) return refuse(step, "{} padding {} does not fit dim of size {}", enum_name(mode), most, n);
    }
    return Status::ok();
  }

 protected:
  std::unique_ptr<CudaTactic> make(const std::string&) const override { return std::make_unique<PadTactic>(); }
};

}  // namespace

std::shared_ptr<const TacticFamily> make_pad_family() { return std::make_shared<PadFamily>(); }

}  // namespace tensoracle::backends::cuda
