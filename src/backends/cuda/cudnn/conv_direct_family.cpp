// Family "kernel.conv_direct" (conv_families.h): the direct kernel of conv_kernels.h, for both
// convolution kinds (one family object registered for both), any geometry the network allows, with bias and the epilogue fused.
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cudnn/conv_epilogue.h"
#include "backends/cuda/cudnn/conv_families.h"
#include "core/errors.h"

namespace tensoracle::backends::cuda {

namespace {

constexpr const char* kFamilyName = "kernel.conv_direct";

class DirectConvTactic final : public CudaTactic {
 public:
  std::string name() const override { return kFamilyName; }

  Status initialize(const StepInstance& step, const RunContext&) override {
    TO_ASSIGN_OR_RETURN(problem_, conv_problem(step));
    TO_ASSIGN_OR_RETURN(epilogue_, conv_epilogue(step, problem_));
    y_shape_ = problem_.y_shape;
    x_shape_ = problem_.x_shape;
    initialized_ = true;
    return Status::ok();
  }

  Status run(const StepInstance& step, const StepBuffers& buffers, const RunContext& ctx) override {
    if (!initialized_ || step.anchor.outputs.empty() || step.anchor.inputs.empty() || !step.anchor.inputs[0] ||
        step.anchor.outputs[0].shape != y_shape_ || step.anchor.inputs[0]->shape != x_shape_)
      return make_error(StatusCode::kFailedPrecondition, "layer '{}': {} runs before initialize() for these shapes",
                        step.anchor.node.name, name());
    const ConvProblem& p = problem_;
    TO_RETURN_IF_ERROR(check_buffer_layouts(step, p, epilogue_, buffers));  // x, w and y are there
    DirectConvLaunch a;
    a.element = conv_element(p.dtype);
    a.transposed = p.transposed;
    a.n = p.n;
    a.c = p.c;
    a.k = p.k;
    a.groups = p.groups;
    for (int d = 0; d < 3; ++d) {
      const size_t i = static_cast<size_t>(d);
      a.in[d] = p.in[i];
      a.out[d] = p.out[i];
      a.kernel[d] = p.kernel[i];
      a.stride[d] = p.stride[i];
      a.dilation[d] = p.dilation[i];
      a.pre[d] = p.pre[i];
    }
    const auto x_strides = p.x_strides(), y_strides = p.y_strides(), w_strides = p.w_strides();
    a.x.data = buffers.inputs[0].data;
    a.w.data = buffers.inputs[1].data;
    for (int d = 0; d < 5; ++d) {
      a.x.stride[d] = x_strides[static_cast<size_t>(d)];
      a.w.stride[d] = w_strides[static_cast<size_t>(d)];
      a.y_stride[d] = y_strides[static_cast<size_t>(d)];
    }
    a.y = buffers.outputs[0].data;
    a.epilogue = epilogue_launch(p, epilogue_, buffers, true);
    TO_CUDA_RETURN_IF_ERROR(launch_direct_conv(a, ctx.stream));
    return Status::ok();
  }

 private:
  bool initialized_ = false;
  ConvProblem problem_;
  ConvEpilogue epilogue_;
  Dims x_shape_, y_shape_;
};

// One family for both kinds (the tactic reads the kind from the step), so the name finds it.
class DirectConvFamily final : public TacticFamily {
 public:
  std::string name() const override { return kFamilyName; }
  bool is_reference() const override { return true; }
  FamilyTraits traits(const Node& node) const override { return conv_traits(node); }

  Status can_implement(const StepInstance& step, const DeviceInfo&) const override {
    TO_ASSIGN_OR_RETURN(const ConvProblem problem, conv_problem(step));
    return conv_epilogue(step, problem).status();
  }

  Result<std::vector<std::unique_ptr<CudaTactic>>> candidates(const StepInstance& step, const RunContext& ctx,
                                                              int) const override {
    auto tactic = std::make_unique<DirectConvTactic>();
    TO_RETURN_IF_ERROR(tactic->initialize(step, ctx));
    std::vector<std::unique_ptr<CudaTactic>> out;
    out.push_back(std::move(tactic));
    return out;
  }

  Result<std::unique_ptr<CudaTactic>> replay(const StepInstance&, const nlohmann::json&) const override {
    return std::unique_ptr<CudaTactic>(std::make_unique<DirectConvTactic>());
  }
};

}  // namespace

std::shared_ptr<const TacticFamily> make_direct_conv_family() {
  static const auto family = std::make_shared<const DirectConvFamily>();
  return family;
}

}  // namespace tensoracle::backends::cuda
