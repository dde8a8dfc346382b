// top_k: the k largest or smallest values of each line along `axis`, sorted, with int64 indices.
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/data_movement_families.h"
#include "backends/cuda/kernels/top_k.h"
#include "graph/attributes.h"
#include "graph/op_def.h"

namespace tensoracle::backends::cuda {

namespace {

Result<TopKArgs> top_k_args(const StepInstance& step) {
  TO_ASSIGN_OR_RETURN(const TopKAttributes* attrs, graph::attributes_of<TopKAttributes>(step.anchor.node));
  const Dims& x = step.anchor.inputs[0]->shape;
  TO_ASSIGN_OR_RETURN(const int64_t axis, graph::axis_of(step.anchor.node, attrs->axis, x.rank()));
  TopKArgs a;
  for (size_t d = 0; d < x.rank(); ++d) {
    if (static_cast<int64_t>(d) < axis) a.outer *= x[d];
    else if (static_cast<int64_t>(d) == axis) a.size = x[d];
    else a.inner *= x[d];
  }
  a.k = attrs->k;
  a.largest = attrs->largest;
  return a;
}

class TopKTactic final : public KernelTactic {
 public:
  TopKTactic() : KernelTactic("kernel.top_k", "") {}
  size_t workspace_size(const StepInstance& step) const override {
    const auto args = top_k_args(step);  // an error: can_implement has refused the step
    return args.is_ok() ? plan_top_k(step.anchor.inputs[0]->dtype, *args).workspace_bytes : 0;
  }
  Status initialize(const StepInstance& step, const RunContext&) override {
    type_ = step.anchor.inputs[0]->dtype;
    TO_ASSIGN_OR_RETURN(args_, top_k_args(step));
    plan_ = plan_top_k(type_, args_);
    TO_RETURN_IF_ERROR(cuda_status(prepare_top_k(type_, plan_), "cudaFuncSetAttribute(top_k kernel)"));
    initialized_ = true;
    return Status::ok();
  }
  Status run(const StepInstance&, const StepBuffers& buffers, const RunContext& ctx) override {
    TO_RETURN_IF_ERROR(require_initialized());
    if (buffers.workspace_bytes < plan_.workspace_bytes)
      return invalid_argument("{}: workspace of {} bytes, needs {}", name(), buffers.workspace_bytes, plan_.workspace_bytes);
    return cuda_status(launch_top_k(type_, buffers.inputs[0].data, buffers.outputs[0].data,
                                    static_cast<int64_t*>(buffers.outputs[1].data), args_, plan_, buffers.workspace,
                                    ctx.stream),
                       "top_k kernel");
  }

 private:
  DataType type_ = DataType::kFloat32;
  TopKArgs args_;
  TopKPlan plan_;
};

class TopKFamily final : public KernelFamily {
 public:
  TopKFamily() : KernelFamily("kernel.top_k") {}
  Status can_implement(const StepInstance& step, const DeviceInfo&) const override {
    TO_RETURN_IF_ERROR(check_plain_step(step));
    const TensorDesc& x = *step.anchor.inputs[0];
    if (!top_k_supports(x.dtype)) return refuse(step, "input type {} (takes fp32, fp16, bf16, int32, int64)", data_type_name(x.dtype));
    if (step.outputs.size() != 2 || step.outputs[1].dtype != DataType::kInt64)
      return refuse(step, "expects a values output and an int64 indices output");
    const auto args = top_k_args(step);
    if (!args.is_ok()) return refuse(step, "{}", args.status().message());
    const TopKArgs& a = *args;
    if (a.k < 1 || a.k > a.size) return refuse(step, "k {} is not in [1, {}]", a.k, a.size);
    // Positions are sorted as int32 (the largest one is the padding marker).
    if (a.size >= (int64_t{1} << 30)) return refuse(step, "a line of {} elements (at most 2^30)", a.size);
    return Status::ok();
  }

 protected:
  std::unique_ptr<CudaTactic> make(const std::string&) const override { return std::make_unique<TopKTactic>(); }
};

}  // namespace

std::shared_ptr<const TacticFamily> make_top_k_family() { return std::make_shared<TopKFamily>(); }

}  // namespace tensoracle::backends::cuda
