// concat: each input is one strided copy into its slab of the output (after simplification a 2D
// copy of `outer` rows, in words of up to 16 bytes when the rows allow it).
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/copy_strided.h"
#include "backends/cuda/kernels/data_movement_families.h"
#include "graph/attributes.h"
#include "graph/op_def.h"

namespace tensoracle::backends::cuda {

namespace {

class ConcatTactic final : public KernelTactic {
 public:
  ConcatTactic() : KernelTactic("kernel.concat", "") {}
  Status initialize(const StepInstance& step, const RunContext&) override {
    const Dims& y = step.outputs[0].shape;
    TO_ASSIGN_OR_RETURN(const ConcatAttributes* attrs, graph::attributes_of<ConcatAttributes>(step.anchor.node));
    TO_ASSIGN_OR_RETURN(const int64_t axis, graph::axis_of(step.anchor.node, attrs->axis, y.rank()));
    const std::vector<int64_t> out_strides = element_strides(y, Layout::kLinear);
    copies_.clear();
    int64_t offset = 0;
    for (const TensorDesc* input : step.anchor.inputs) {
      const std::vector<int64_t> in_strides = element_strides(input->shape, Layout::kLinear);
      StridedCopy copy;
      copy.rank = static_cast<int>(y.rank());
      for (size_t d = 0; d < y.rank(); ++d) {
        copy.shape[d] = input->shape[d];
        copy.in_stride[d] = in_strides[d];
        copy.out_stride[d] = out_strides[d];
      }
      copy.out_offset = offset * out_strides[static_cast<size_t>(axis)];
      offset += input->shape[static_cast<size_t>(axis)];
      copies_.push_back(copy);
    }
    element_size_ = data_type_size(step.outputs[0].dtype);
    initialized_ = true;
    return Status::ok();
  }
  Status run(const StepInstance&, const StepBuffers& buffers, const RunContext& ctx) override {
    TO_RETURN_IF_ERROR(require_initialized());
    if (copies_.size() != buffers.inputs.size())
      return invalid_argument("{}: {} input buffers, initialized for {}", name(), buffers.inputs.size(), copies_.size());
    for (size_t i = 0; i < copies_.size(); ++i)
      TO_RETURN_IF_ERROR(cuda_status(launch_strided_copy(buffers.inputs[i].data, buffers.outputs[0].data, element_size_,
                                                         copies_[i], CopyKernel::kStrided, ctx.stream),
                                     "concat kernel"));
    return Status::ok();
  }

 private:
  std::vector<StridedCopy> copies_;
  size_t element_size_ = 0;
};

class ConcatFamily final : public KernelFamily {
 public:
  ConcatFamily() : KernelFamily("kernel.concat") {}
  Status can_implement(const StepInstance& step, const DeviceInfo&) const override {
    TO_RETURN_IF_ERROR(check_plain_step(step));
    const Dims& y = step.outputs[0].shape;
    TO_ASSIGN_OR_RETURN(const ConcatAttributes* attrs, graph::attributes_of<ConcatAttributes>(step.anchor.node));
    if (auto axis = graph::axis_of(step.anchor.node, attrs->axis, y.rank()); !axis.is_ok())
      return refuse(step, "{}", axis.status().message());
    for (const TensorDesc* input : step.anchor.inputs)
      if (input->shape.rank() != y.rank() || input->dtype != step.outputs[0].dtype)
        return refuse(step, "input {} does not match the output {}", input->to_string(), step.outputs[0].to_string());
    return Status::ok();
  }

 protected:
  std::unique_ptr<CudaTactic> make(const std::string&) const override { return std::make_unique<ConcatTactic>(); }
};

}  // namespace

std::shared_ptr<const TacticFamily> make_concat_family() { return std::make_shared<ConcatFamily>(); }

}  // namespace tensoracle::backends::cuda
