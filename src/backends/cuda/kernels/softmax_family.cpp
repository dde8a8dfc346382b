// kernel.softmax: softmax along any axis of a linear fp32/fp16/bf16 tensor. The last axis runs
// the row kernels (a warp or a block per row; variants pick which and the block size), any other
// axis a thread per line.
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/pointwise_families.h"
#include "backends/cuda/kernels/softmax_kernel.h"
#include "graph/attributes.h"
#include "graph/op_def.h"

namespace tensoracle::backends::cuda {

namespace {

constexpr const char* kFamily = "kernel.softmax";
constexpr const char* kColumns = "columns";

Result<SoftmaxShape> softmax_shape(const StepInstance& step) {
  const Dims& x = step.anchor.inputs[0]->shape;
  TO_ASSIGN_OR_RETURN(const SoftmaxAttributes* attrs, graph::attributes_of<SoftmaxAttributes>(step.anchor.node));
  TO_ASSIGN_OR_RETURN(const int64_t axis, graph::axis_of(step.anchor.node, attrs->axis, x.rank()));
  SoftmaxShape s;
  for (int64_t d = 0; d < static_cast<int64_t>(x.rank()); ++d) {
    if (d < axis) s.outer *= x[d];
    else if (d == axis) s.size = x[d];
    else s.inner *= x[d];
  }
  return s;
}

class SoftmaxTactic final : public KernelTactic {
 public:
  explicit SoftmaxTactic(const std::string& variant) : KernelTactic(kFamily, variant) {}
  Status initialize(const StepInstance& step, const RunContext&) override {
    initialized_ = false;
    TO_ASSIGN_OR_RETURN(shape_, softmax_shape(step));
    if (variant() != kColumns) {
      TO_ASSIGN_OR_RETURN(rows_, row_launch(shape_.size, variant()));
    }
    type_ = step.outputs[0].dtype;
    initialized_ = true;
    return Status::ok();
  }
  Status run(const StepInstance&, const StepBuffers& buffers, const RunContext& ctx) override {
    TO_RETURN_IF_ERROR(require_initialized());
    return cuda_status(launch_softmax(buffers.inputs[0].data, buffers.outputs[0].data, type_, shape_, rows_, ctx.stream),
                       "softmax kernel");
  }

 private:
  SoftmaxShape shape_;
  RowLaunch rows_;
  DataType type_ = DataType::kFloat32;
};

class SoftmaxFamily final : public KernelFamily {
 public:
  SoftmaxFamily() : KernelFamily(kFamily) {}
  Status can_implement(const StepInstance& step, const DeviceInfo&) const override {
    TO_RETURN_IF_ERROR(check_layer(step));
    if (step.outputs[0].dtype != step.anchor.inputs[0]->dtype)
      return refuse(step, "output type {} differs from the input's", data_type_name(step.outputs[0].dtype));
    auto shape = softmax_shape(step);
    if (!shape.is_ok()) return refuse(step, "{}", shape.status().message());
    return Status::ok();
  }

 protected:
  std::vector<std::string> variants(const StepInstance& step) const override {
    auto shape = softmax_shape(step);
    if (!shape.is_ok() || shape->inner != 1) return {kColumns};
    return row_variants(shape->size);
  }
  std::unique_ptr<CudaTactic> make(const std::string& variant) const override {
    return std::make_unique<SoftmaxTactic>(variant);
  }
};

}  // namespace

std::shared_ptr<const TacticFamily> make_softmax_family() { return std::make_shared<SoftmaxFamily>(); }

}  // namespace tensoracle::backends::cuda
