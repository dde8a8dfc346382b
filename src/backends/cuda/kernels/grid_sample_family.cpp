// grid_sample: PyTorch's F.grid_sample for 4D inputs.
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/data_movement_families.h"
#include "backends/cuda/kernels/grid_sample.h"
#include "graph/attributes.h"

namespace tensoracle::backends::cuda {

namespace {

class GridSampleTactic final : public KernelTactic {
 public:
  GridSampleTactic() : KernelTactic("kernel.grid_sample", "") {}
  Status initialize(const StepInstance& step, const RunContext&) override {
    TO_ASSIGN_OR_RETURN(const GridSampleAttributes* attrs, graph::attributes_of<GridSampleAttributes>(step.anchor.node));
    const Dims& x = step.anchor.inputs[0]->shape;
    const Dims& y = step.outputs[0].shape;
    args_ = GridSampleArgs{};
    args_.n = x[0];
    args_.c = x[1];
    args_.h = x[2];
    args_.w = x[3];
    args_.out_h = y[2];
    args_.out_w = y[3];
    args_.align_corners = attrs->align_corners;
    args_.border = attrs->padding == GridSamplePadding::kBorder;
    args_.nearest = attrs->mode == GridSampleMode::kNearest;
    type_ = step.outputs[0].dtype;
    initialized_ = true;
    return Status::ok();
  }
  Status run(const StepInstance&, const StepBuffers& buffers, const RunContext& ctx) override {
    TO_RETURN_IF_ERROR(require_initialized());
    return cuda_status(launch_grid_sample(type_, buffers.inputs[0].data, buffers.inputs[1].data, buffers.outputs[0].data,
                                          args_, ctx.stream),
                       "grid_sample kernel");
  }

 private:
  GridSampleArgs args_;
  DataType type_ = DataType::kFloat32;
};

class GridSampleFamily final : public KernelFamily {
 public:
  GridSampleFamily() : KernelFamily("kernel.grid_sample") {}
  Status can_implement(const StepInstance& step, const DeviceInfo&) const override {
    TO_RETURN_IF_ERROR(check_plain_step(step));
    const TensorDesc& x = *step.anchor.inputs[0];
    const TensorDesc& grid = *step.anchor.inputs[1];
    if (x.dtype != DataType::kFloat32 && x.dtype != DataType::kFloat16 && x.dtype != DataType::kBFloat16)
      return refuse(step, "type {} (takes fp32, fp16, bf16)", data_type_name(x.dtype));
    if (grid.dtype != x.dtype) return refuse(step, "grid {} and input {} differ in type", grid.to_string(), x.to_string());
    const Dims& y = step.outputs[0].shape;
    if (x.shape.rank() != 4 || grid.shape.rank() != 4 || y.rank() != 4 || grid.shape[3] != 2 ||
        grid.shape[0] != x.shape[0] || y[2] != grid.shape[1] || y[3] != grid.shape[2])
      return refuse(step, "takes an [N, C, H, W] input and an [N, Ho, Wo, 2] grid, got {} and {}", x.to_string(),
                    grid.to_string());
    return Status::ok();
  }

 protected:
  std::unique_ptr<CudaTactic> make(const std::string&) const override { return std::make_unique<GridSampleTactic>(); }
};

}  // namespace

std::shared_ptr<const TacticFamily> make_grid_sample_family() { return std::make_shared<GridSampleFamily>(); }

}  // namespace tensoracle::backends::cuda
