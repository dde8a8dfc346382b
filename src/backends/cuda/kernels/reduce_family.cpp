// kernel.reduce: sum, mean, max, min, prod over any set of axes of a linear tensor (fp32, fp16,
// bf16, int32, int64), keep_dims or not.
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/pointwise_families.h"
#include "backends/cuda/kernels/reduce_kernel.h"
#include "graph/attributes.h"
#include "graph/op_def.h"

namespace tensoracle::backends::cuda {

namespace {

constexpr const char* kFamily = "kernel.reduce";

// Kept and reduced dims of the input, size-1 dims dropped and neighbours of one kind merged.
Result<ReduceArgs> reduce_args(const StepInstance& step) {
  TO_ASSIGN_OR_RETURN(const ReduceAttributes* attrs, graph::attributes_of<ReduceAttributes>(step.anchor.node));
  const Dims& x = step.anchor.inputs[0]->shape;
  TO_ASSIGN_OR_RETURN(const std::vector<int64_t> axes, graph::reduced_axes(step.anchor.node, *attrs, x.rank()));
  std::vector<bool> reduced(x.rank(), false);
  for (int64_t axis : axes) reduced[static_cast<size_t>(axis)] = true;
  const std::vector<int64_t> strides = element_strides(x, Layout::kLinear);
  ReduceArgs r;
  r.op = attrs->op;
  r.type = step.anchor.inputs[0]->dtype;
  r.outputs = 1;
  r.count = 1;
  int last_kind = -1;  // 0 kept, 1 reduced: the kind of the previous dim that was kept in the lists
  for (size_t d = 0; d < x.rank(); ++d) {
    (reduced[d] ? r.count : r.outputs) *= x[d];
    if (x[d] == 1) continue;
    int& rank = reduced[d] ? r.reduced_rank : r.kept_rank;
    int64_t* shape = reduced[d] ? r.reduced_shape : r.kept_shape;
    int64_t* stride = reduced[d] ? r.reduced_stride : r.kept_stride;
    const int kind = reduced[d] ? 1 : 0;
    if (last_kind == kind && stride[rank - 1] == strides[d] * x[d]) {
      shape[rank - 1] *= x[d];
      stride[rank - 1] = strides[d];
    } else {
      shape[rank] = x[d];
      stride[rank] = strides[d];
      ++rank;
    }
    last_kind = kind;
  }
  return r;
}

class ReduceTactic final : public KernelTactic {
 public:
  explicit ReduceTactic(const std::string& variant) : KernelTactic(kFamily, variant) {}
  Status initialize(const StepInstance& step, const RunContext&) override {
    initialized_ = false;
    TO_ASSIGN_OR_RETURN(args_, reduce_args(step));
    shape_ = reduce_shape_for(args_);
    initialized_ = true;
    return Status::ok();
  }
  Status run(const StepInstance&, const StepBuffers& buffers, const RunContext& ctx) override {
    TO_RETURN_IF_ERROR(require_initialized());
    return cuda_status(launch_reduce(buffers.inputs[0].data, buffers.outputs[0].data, args_, shape_, ctx.stream),
                       "reduce kernel");
  }

 private:
  ReduceArgs args_;
  ReduceShape shape_ = ReduceShape::kRows;
};

class ReduceFamily final : public KernelFamily {
 public:
  ReduceFamily() : KernelFamily(kFamily) {}
  Status can_implement(const StepInstance& step, const DeviceInfo&) const override {
    TO_RETURN_IF_ERROR(check_layer(step, /*allow_nhwc=*/false, /*any_type=*/true));
    const DataType type = step.anchor.inputs[0]->dtype;
    if (!is_kernel_float(type) && type != DataType::kInt32 && type != DataType::kInt64)
      return refuse(step, "input type {} (takes fp32, fp16, bf16, int32, int64)", data_type_name(type));
    if (step.outputs[0].dtype != type) return refuse(step, "output type {} differs from the input's", data_type_name(step.outputs[0].dtype));
    auto args = reduce_args(step);
    if (!args.is_ok()) return refuse(step, "{}", args.status().message());
    return Status::ok();
  }

 protected:
  std::unique_ptr<CudaTactic> make(const std::string& variant) const override {
    return std::make_unique<ReduceTactic>(variant);
  }
};

}  // namespace

std::shared_ptr<const TacticFamily> make_reduce_family() { return std::make_shared<ReduceFamily>(); }

}  // namespace tensoracle::backends::cuda
