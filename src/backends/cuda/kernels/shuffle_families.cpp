// Shuffle layers: reshape (a copy of the bytes; the data order does not change) and transpose
// (a strided copy, tiled through shared memory when the dims contiguous on each side differ).
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/copy_plan.h"
#include "backends/cuda/kernels/data_movement_families.h"
#include "graph/attributes.h"

namespace tensoracle::backends::cuda {

namespace {

class ReshapeTactic final : public KernelTactic {
 public:
  ReshapeTactic() : KernelTactic("kernel.reshape", "") {}
  Status run(const StepInstance&, const StepBuffers& buffers, const RunContext& ctx) override {
    const DeviceTensor& in = buffers.inputs[0];
    const DeviceTensor& out = buffers.outputs[0];
    if (out.byte_size() == 0 || in.data == out.data) return Status::ok();
    TO_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(out.data, in.data, out.byte_size(), cudaMemcpyDeviceToDevice, ctx.stream));
    return Status::ok();
  }
};

class ReshapeFamily final : public KernelFamily {
 public:
  ReshapeFamily() : KernelFamily("kernel.reshape") {}
  Status can_implement(const StepInstance& step, const DeviceInfo&) const override { return check_plain_step(step); }

 protected:
  std::unique_ptr<CudaTactic> make(const std::string&) const override { return std::make_unique<ReshapeTactic>(); }
};

// Output dim i walks input dim perm[i].
Result<StridedCopy> transpose_copy(const StepInstance& step) {
  const Dims& x = step.anchor.inputs[0]->shape;
  const Dims& y = step.outputs[0].shape;
  TO_ASSIGN_OR_RETURN(const TransposeAttributes* attrs, graph::attributes_of<TransposeAttributes>(step.anchor.node));
  const std::vector<int64_t>& perm = attrs->perm;
  if (perm.size() != y.rank() || x.rank() != y.rank())
    return unsupported("perm {} does not cover the {} dims of the output", Dims(perm).to_string(), y.rank());
  const std::vector<int64_t> in_strides = element_strides(x, Layout::kLinear);
  const std::vector<int64_t> out_strides = element_strides(y, Layout::kLinear);
  StridedCopy copy;
  copy.rank = static_cast<int>(y.rank());
  for (size_t i = 0; i < y.rank(); ++i) {
    copy.shape[i] = y[i];
    copy.in_stride[i] = in_strides[static_cast<size_t>(perm[i])];
    copy.out_stride[i] = out_strides[i];
  }
  return copy;
}

class TransposeTactic final : public KernelTactic {
 public:
  explicit TransposeTactic(const std::string& variant) : KernelTactic("kernel.transpose", variant) {}
  Status initialize(const StepInstance& step, const RunContext&) override {
    TO_ASSIGN_OR_RETURN(copy_, transpose_copy(step));
    element_size_ = data_type_size(step.outputs[0].dtype);
    initialized_ = true;
    return Status::ok();
  }
  Status run(const StepInstance&, const StepBuffers& buffers, const RunContext& ctx) override {
    TO_RETURN_IF_ERROR(require_initialized());
    const CopyKernel kernel = variant() == "tiled" ? CopyKernel::kTiled : CopyKernel::kStrided;
    return cuda_status(launch_strided_copy(buffers.inputs[0].data, buffers.outputs[0].data, element_size_, copy_, kernel,
                                           ctx.stream),
                       "transpose kernel");
  }

 private:
  StridedCopy copy_;
  size_t element_size_ = 0;
};

class TransposeFamily final : public KernelFamily {
 public:
  TransposeFamily() : KernelFamily("kernel.transpose") {}
  Status can_implement(const StepInstance& step, const DeviceInfo&) const override {
    TO_RETURN_IF_ERROR(check_plain_step(step));
    if (auto copy = transpose_copy(step); !copy.is_ok()) return refuse(step, "{}", copy.status().message());
    return Status::ok();
  }

 protected:
  std::vector<std::string> variants(const StepInstance& step) const override {
    // Tiling depends only on the geometry (word grouping, which needs alignment, excludes it).
    auto copy = transpose_copy(step);
    if (!copy.is_ok()) return {"strided"};  // can_implement has refused the step
    const CopyPlan plan = plan_strided_copy(*copy, data_type_size(step.outputs[0].dtype), nullptr, nullptr);
    if (tiled_copy_applies(plan)) return {"tiled", "strided"};
    return {"strided"};
  }
  std::unique_ptr<CudaTactic> make(const std::string& variant) const override {
    return std::make_unique<TransposeTactic>(variant);
  }
};

}  // namespace

std::shared_ptr<const TacticFamily> make_reshape_family() { return std::make_shared<ReshapeFamily>(); }
std::shared_ptr<const TacticFamily> make_transpose_family() { return std::make_shared<TransposeFamily>(); }

}  // namespace tensoracle::backends::cuda
