// slice: y[i] = x[start + i*stride] per dim, one strided copy (negative strides walk backwards).
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/copy_strided.h"
#include "backends/cuda/kernels/data_movement_families.h"
#include "graph/attributes.h"

namespace tensoracle::backends::cuda {

namespace {

// The slice's start and step per dim, one entry for each dim of the input and the output.
struct SliceWalk {
  std::vector<int64_t> start, steps;
};
Result<SliceWalk> slice_walk(const StepInstance& step) {
  TO_ASSIGN_OR_RETURN(const SliceAttributes* attrs, graph::attributes_of<SliceAttributes>(step.anchor.node));
  const Dims& x = step.anchor.inputs[0]->shape;
  SliceWalk walk{attrs->start, attrs->strides(x.rank())};
  if (walk.start.size() != x.rank() || walk.steps.size() != x.rank() || step.outputs[0].shape.rank() != x.rank())
    return unsupported("start and stride must have one entry per dim of {}", x.to_string());
  return walk;
}

class SliceTactic final : public KernelTactic {
 public:
  SliceTactic() : KernelTactic("kernel.slice", "") {}
  Status initialize(const StepInstance& step, const RunContext&) override {
    const Dims& x = step.anchor.inputs[0]->shape;
    const Dims& y = step.outputs[0].shape;
    TO_ASSIGN_OR_RETURN(const SliceWalk walk, slice_walk(step));
    const std::vector<int64_t>& start = walk.start;
    const std::vector<int64_t>& steps = walk.steps;
    const std::vector<int64_t> in_strides = element_strides(x, Layout::kLinear);
    const std::vector<int64_t> out_strides = element_strides(y, Layout::kLinear);
    copy_ = StridedCopy{};
    copy_.rank = static_cast<int>(y.rank());
    for (size_t d = 0; d < y.rank(); ++d) {
      copy_.shape[d] = y[d];
      copy_.in_stride[d] = in_strides[d] * steps[d];
      copy_.out_stride[d] = out_strides[d];
      copy_.in_offset += start[d] * in_strides[d];
    }
    element_size_ = data_type_size(step.outputs[0].dtype);
    initialized_ = true;
    return Status::ok();
  }
  Status run(const StepInstance&, const StepBuffers& buffers, const RunContext& ctx) override {
    TO_RETURN_IF_ERROR(require_initialized());
    return cuda_status(launch_strided_copy(buffers.inputs[0].data, buffers.outputs[0].data, element_size_, copy_,
                                           CopyKernel::kStrided, ctx.stream),
                       "slice kernel");
  }

 private:
  StridedCopy copy_;
  size_t element_size_ = 0;
};

class SliceFamily final : public KernelFamily {
 public:
  SliceFamily() : KernelFamily("kernel.slice") {}
  Status can_implement(const StepInstance& step, const DeviceInfo&) const override {
    TO_RETURN_IF_ERROR(check_plain_step(step));
    const Dims& x = step.anchor.inputs[0]->shape;
    const Dims& y = step.outputs[0].shape;
    auto walk = slice_walk(step);
    if (!walk.is_ok()) return refuse(step, "{}", walk.status().message());
    const std::vector<int64_t>& start = walk->start;
    const std::vector<int64_t>& steps = walk->steps;
    // The reference's run-time check, made here where the shapes are concrete.
    for (size_t i = 0; i < x.rank(); ++i) {
      if (y[i] == 0) continue;
      const int64_t last = start[i] + (y[i] - 1) * steps[i];
      if (start[i] < 0 || start[i] >= x[i] || last < 0 || last >= x[i])
        return invalid_argument("layer '{}' (slice): dim {} reads [{}..{}] outside [0, {})", step.anchor.node.name, i,
                                start[i], last, x[i]);
    }
    return Status::ok();
  }

 protected:
  std::unique_ptr<CudaTactic> make(const std::string&) const override { return std::make_unique<SliceTactic>(); }
};

}  // namespace

std::shared_ptr<const TacticFamily> make_slice_family() { return std::make_shared<SliceFamily>(); }

}  // namespace tensoracle::backends::cuda
