// gather: rows of `data` along `axis` picked by int32 / int64 indices (embeddings: axis 0).
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/data_movement_families.h"
#include "backends/cuda/kernels/gather.h"
#include "graph/attributes.h"
#include "graph/op_def.h"

namespace tensoracle::backends::cuda {

namespace {

class GatherTactic final : public KernelTactic {
 public:
  GatherTactic() : KernelTactic("kernel.gather", "") {}
  Status initialize(const StepInstance& step, const RunContext&) override {
    const Dims& data = step.anchor.inputs[0]->shape;
    TO_ASSIGN_OR_RETURN(const GatherAttributes* attrs, graph::attributes_of<GatherAttributes>(step.anchor.node));
    TO_ASSIGN_OR_RETURN(const int64_t axis, graph::axis_of(step.anchor.node, attrs->axis, data.rank()));
    args_ = GatherArgs{};
    for (size_t d = 0; d < data.rank(); ++d) {
      if (static_cast<int64_t>(d) < axis) args_.outer *= data[d];
      else if (static_cast<int64_t>(d) == axis) args_.axis_size = data[d];
      else args_.inner *= data[d];
    }
    args_.indices = elements_in(step.anchor.inputs[1]->shape);
    index64_ = step.anchor.inputs[1]->dtype == DataType::kInt64;
    element_size_ = data_type_size(step.outputs[0].dtype);
    initialized_ = true;
    return Status::ok();
  }
  Status run(const StepInstance&, const StepBuffers& buffers, const RunContext& ctx) override {
    TO_RETURN_IF_ERROR(require_initialized());
    return cuda_status(launch_gather(buffers.inputs[0].data, buffers.inputs[1].data, index64_, buffers.outputs[0].data,
                                     element_size_, args_, ctx.stream),
                       "gather kernel");
  }

 private:
  GatherArgs args_;
  bool index64_ = false;
  size_t element_size_ = 0;
};

class GatherFamily final : public KernelFamily {
 public:
  GatherFamily() : KernelFamily("kernel.gather") {}
  Status can_implement(const StepInstance& step, const DeviceInfo&) const override {
    TO_RETURN_IF_ERROR(check_plain_step(step));
    const TensorDesc& data = *step.anchor.inputs[0];
    const TensorDesc& indices = *step.anchor.inputs[1];
    if (indices.dtype != DataType::kInt32 && indices.dtype != DataType::kInt64)
      return refuse(step, "indices of type {} (takes int32 or int64)", data_type_name(indices.dtype));
    TO_ASSIGN_OR_RETURN(const GatherAttributes* attrs, graph::attributes_of<GatherAttributes>(step.anchor.node));
    TO_ASSIGN_OR_RETURN(const int64_t axis, graph::axis_of(step.anchor.node, attrs->axis, data.shape.rank()));
    // Every index of an empty axis is out of range: the reference's error, known before running.
    if (data.shape[static_cast<size_t>(axis)] == 0 && elements_in(step.outputs[0].shape) > 0)
      return invalid_argument("layer '{}' (gather): axis {} of {} is empty, so every index is out of range",
                              step.anchor.node.name, axis, data.to_string());
    return Status::ok();
  }

 protected:
  std::unique_ptr<CudaTactic> make(const std::string&) const override { return std::make_unique<GatherTactic>(); }
};

}  // namespace

std::shared_ptr<const TacticFamily> make_gather_family() { return std::make_shared<GatherFamily>(); }

}  // namespace tensoracle::backends::cuda
