// Family "kernel.conv_direct" (conv_families.h): the direct kernel of conv_kernels.h, for both
// convolution kinds (one family object registered for both), any geometry the network allows, with bias and the epilogue fused.
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cudnn/conv_epilogue.h"
#include "backends/cuda/cudnn/conv_families.h"
#include "backends/cuda/step_shapes.h"
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
      return not_prepared_for(step, name());
    const ConvProblem& p = problem_;
    TO_RETURN_IF_ERROR(check_buffer_layouts(step, p, epilogue_, buffers));  // x, w and y are there
    const DirectConvLaunch a = direct_conv_launch(p, buffers.inputs[0].data, buffers.inputs[1].data,
                                                  buffers.outputs[0].data, epilogue_launch(p, epilogue_, buffers, true));
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
