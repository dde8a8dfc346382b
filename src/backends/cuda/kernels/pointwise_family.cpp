// kernel.pointwise: a fused chain of elementwise, unary, activation, cast and select layers run
// by the interpreter kernel in one pass. Any layout (each tensor is read through its geometry);
// variants differ in threads per block.
#include "backends/cuda/kernels/pointwise_families.h"
#include "backends/cuda/kernels/pointwise_launch.h"

namespace tensoracle::backends::cuda {

namespace {

constexpr const char* kFamily = "kernel.pointwise";

int threads_of(const std::string& variant) {
  if (variant == "t128") return 128;
  if (variant == "t512") return 512;
  return PointwiseLaunch::kDefaultThreads;
}

Result<PointwiseLaunch> prepare_step(const StepInstance& step, int threads) {
  const Layout out_layout = step.output_layouts.empty() ? Layout::kLinear : step.output_layouts[0];
  return PointwiseLaunch::prepare(step.program, step.input_layouts, step.outputs[0], out_layout, threads);
}

class PointwiseTactic final : public KernelTactic {
 public:
  explicit PointwiseTactic(const std::string& variant) : KernelTactic(kFamily, variant) {}
  Status initialize(const StepInstance& step, const RunContext&) override {
    initialized_ = false;
    TO_ASSIGN_OR_RETURN(launch_, prepare_step(step, threads_of(variant())));
    initialized_ = true;
    return Status::ok();
  }
  Status run(const StepInstance&, const StepBuffers& buffers, const RunContext& ctx) override {
    TO_RETURN_IF_ERROR(require_initialized());
    if (buffers.inputs.size() != static_cast<size_t>(launch_.num_inputs()) || buffers.outputs.empty())
      return invalid_argument("{}: {} input buffers for a program of {} inputs", name(), buffers.inputs.size(),
                              launch_.num_inputs());
    const void* in[kMaxPointwiseInputs];
    for (size_t k = 0; k < buffers.inputs.size(); ++k) in[k] = buffers.inputs[k].data;
    return launch_.run(in, buffers.outputs[0].data, ctx.stream);
  }

 private:
  PointwiseLaunch launch_;
};

class PointwiseFamily final : public KernelFamily {
 public:
  PointwiseFamily() : KernelFamily(kFamily) {}
  // One program runs the whole chain (PointwiseLaunch reads and writes any mix of layouts).
  FamilyTraits traits(const Node&) const override {
    FamilyTraits t;
    t.epilogue = true;
    t.nhwc = true;
    return t;
  }
  Status can_implement(const StepInstance& step, const DeviceInfo&) const override {
    if (step.program.empty()) return refuse(step, "the step carries no pointwise program");
    if (step.outputs.size() != 1) return refuse(step, "{} outputs (a program has one)", step.outputs.size());
    const TensorDesc& out = step.outputs[0];
    if (!out.shape.is_static()) return refuse(step, "output has a dynamic shape {}", out.shape.to_string());
    for (size_t k = 0; k < step.program.inputs.size(); ++k)
      if (!step.program.inputs[k].shape.is_static())
        return refuse(step, "program input {} has a dynamic shape {}", k, step.program.inputs[k].shape.to_string());
    auto launch = prepare_step(step, PointwiseLaunch::kDefaultThreads);
    if (!launch.is_ok()) return refuse(step, "{}", launch.status().message());
    return Status::ok();
  }

 protected:
  std::vector<std::string> variants(const StepInstance&) const override { return {"", "t512", "t128"}; }
  std::unique_ptr<CudaTactic> make(const std::string& variant) const override {
    return std::make_unique<PointwiseTactic>(variant);
  }
};

}  // namespace

std::shared_ptr<const TacticFamily> make_pointwise_family() { return std::make_shared<PointwiseFamily>(); }

}  // namespace tensoracle::backends::cuda
