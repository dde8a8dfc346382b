// pooling: max / average over 1-3 trailing dims (count_include_pad, ceil_mode, global), on
// linear tensors and, at rank 4, channels-last (nhwc) ones: the planner runs fp16 max-pools and
// global average pools in nhwc next to nhwc convolutions.
#include <algorithm>
#include <numeric>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/data_movement_families.h"
#include "backends/cuda/kernels/pooling.h"
#include "graph/attributes.h"

namespace tensoracle::backends::cuda {

namespace {

// Windows at least this large are worth a warp each.
constexpr int64_t kWarpWindow = 64;

size_t pooled_dims(const StepInstance& step, const PoolingAttributes& attrs) {
  if (attrs.global) return step.anchor.inputs[0]->shape.rank() - 2;
  return attrs.window.size();
}

Layout layout_at(const std::vector<Layout>& layouts, size_t i) { return i < layouts.size() ? layouts[i] : Layout::kLinear; }

Result<PoolingArgs> pooling_args(const StepInstance& step) {
  TO_ASSIGN_OR_RETURN(const PoolingAttributes* attrs, graph::attributes_of<PoolingAttributes>(step.anchor.node));
  const Dims& x = step.anchor.inputs[0]->shape;
  const Dims& y = step.outputs[0].shape;
  const bool global = attrs->global;
  const size_t n = pooled_dims(step, *attrs);
  if (n < 1 || n > 3 || x.rank() < n + 1 || y.rank() != x.rank())
    return unsupported("layer '{}': pools {} dims of {} (takes 1 to 3)", step.anchor.node.name, n, x.to_string());
  const std::vector<int64_t> strides = attrs->strides(n), pres = attrs->pre_paddings(n), posts = attrs->post_paddings(n);
  const std::vector<int64_t> in_strides = element_strides(x, layout_at(step.input_layouts, 0));
  const std::vector<int64_t> out_strides = element_strides(y, layout_at(step.output_layouts, 0));
  PoolingArgs a;
  a.is_max = attrs->kind == PoolingKind::kMax;
  a.count_include_pad = attrs->count_include_pad;
  a.count = elements_in(y);
  for (size_t i = 0; i < n; ++i) {
    const size_t d = 3 - n + i, dim = x.rank() - n + i;
    a.in[d] = x[dim];
    a.in_step[d] = in_strides[dim];
    a.window[d] = global ? x[dim] : attrs->window[i];
    a.stride[d] = global ? a.window[d] : strides[i];
    a.pre[d] = pres[i];
    a.post[d] = posts[i];
  }
  // Walk the output in memory order: dims by decreasing output stride.
  std::vector<size_t> order(y.rank());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t l, size_t r) { return out_strides[l] > out_strides[r]; });
  a.rank = static_cast<int>(y.rank());
  for (size_t k = 0; k < order.size(); ++k) {
    const size_t dim = order[k];
    a.extent[k] = y[dim];
    a.out_stride[k] = out_strides[dim];
    const bool pooled = dim + n >= y.rank();
    a.pooled[k] = pooled ? static_cast<int>(3 - n + (dim - (y.rank() - n))) : -1;
    a.in_stride[k] = pooled ? 0 : in_strides[dim];
  }
  return a;
}

class PoolingTactic final : public KernelTactic {
 public:
  explicit PoolingTactic(const std::string& variant) : KernelTactic("kernel.pooling", variant) {}
  Status initialize(const StepInstance& step, const RunContext&) override {
    TO_ASSIGN_OR_RETURN(args_, pooling_args(step));
    type_ = step.outputs[0].dtype;
    initialized_ = true;
    return Status::ok();
  }
  Status run(const StepInstance&, const StepBuffers& buffers, const RunContext& ctx) override {
    TO_RETURN_IF_ERROR(require_initialized());
    const PoolingKernel kernel = variant() == "warp" ? PoolingKernel::kWarp : PoolingKernel::kThread;
    return cuda_status(launch_pooling(type_, buffers.inputs[0].data, buffers.outputs[0].data, args_, kernel, ctx.stream),
                       "pooling kernel");
  }

 private:
  PoolingArgs args_;
  DataType type_ = DataType::kFloat32;
};

class PoolingFamily final : public KernelFamily {
 public:
  PoolingFamily() : KernelFamily("kernel.pooling") {}
  FamilyTraits traits(const Node&) const override {
    FamilyTraits t;
    t.nhwc = true;
    return t;
  }
  Status can_implement(const StepInstance& step, const DeviceInfo&) const override {
    TO_RETURN_IF_ERROR(check_plain_step(step, /*allow_nhwc=*/true));
    TO_ASSIGN_OR_RETURN(const PoolingAttributes* attrs, graph::attributes_of<PoolingAttributes>(step.anchor.node));
    const TensorDesc& x = *step.anchor.inputs[0];
    const Dims& y = step.outputs[0].shape;
    if (x.dtype != DataType::kFloat32 && x.dtype != DataType::kFloat16 && x.dtype != DataType::kBFloat16)
      return refuse(step, "type {} (takes fp32, fp16, bf16)", data_type_name(x.dtype));
    const bool global = attrs->global;
    if (global && x.shape.rank() < 3) return refuse(step, "global pooling of rank-{} {}", x.shape.rank(), x.to_string());
    const size_t n = pooled_dims(step, *attrs);
    if (n < 1 || n > 3) return refuse(step, "pools {} dims (takes 1 to 3)", n);
    if (x.shape.rank() < n + 1 || y.rank() != x.shape.rank()) return refuse(step, "{} has too few dims to pool {}", x.to_string(), n);
    if (!global) {
      const auto check = [&](const std::vector<int64_t>& v) { return v.size() == n || v.empty(); };
      if (!check(attrs->stride) || !check(attrs->pre_padding) || !check(attrs->post_padding))
        return refuse(step, "stride and padding must each be empty or have {} entries", n);
    }
    for (size_t i = x.shape.rank() - n; i < x.shape.rank(); ++i)
      if (x.shape[i] == 0 && elements_in(y) > 0) return refuse(step, "pools an empty dim of {}", x.to_string());
    return Status::ok();
  }

 protected:
  std::vector<std::string> variants(const StepInstance& step) const override {
    const auto args = pooling_args(step);
    if (!args.is_ok()) return {"thread"};  // can_implement has refused the step
    const PoolingArgs& a = *args;
    const int64_t window = a.window[0] * a.window[1] * a.window[2];
    if (window >= kWarpWindow) return {"warp", "thread"};
    return {"thread"};
  }
  std::unique_ptr<CudaTactic> make(const std::string& variant) const override {
    return std::make_unique<PoolingTactic>(variant);
  }
};

}  // namespace

std::shared_ptr<const TacticFamily> make_pooling_family() { return std::make_shared<PoolingFamily>(); }

}  // namespace tensoracle::backends::cuda
