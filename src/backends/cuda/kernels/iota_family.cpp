// iota: int64 [0, n) where n is a dim of the input, whose buffer is not read.
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/data_movement_families.h"
#include "backends/cuda/kernels/iota.h"

namespace tensoracle::backends::cuda {

namespace {

class IotaTactic final : public KernelTactic {
 public:
  IotaTactic() : KernelTactic("kernel.iota", "") {}
  Status initialize(const StepInstance& step, const RunContext&) override {
    count_ = elements_in(step.outputs[0].shape);
    initialized_ = true;
    return Status::ok();
  }
  Status run(const StepInstance&, const StepBuffers& buffers, const RunContext& ctx) override {
    TO_RETURN_IF_ERROR(require_initialized());
    return cuda_status(launch_iota(static_cast<int64_t*>(buffers.outputs[0].data), count_, ctx.stream), "iota kernel");
  }

 private:
  int64_t count_ = 0;
};

class IotaFamily final : public KernelFamily {
 public:
  IotaFamily() : KernelFamily("kernel.iota") {}
  Status can_implement(const StepInstance& step, const DeviceInfo&) const override {
    TO_RETURN_IF_ERROR(check_plain_step(step));
    if (step.outputs[0].dtype != DataType::kInt64)
      return refuse(step, "output of type {} (writes int64)", data_type_name(step.outputs[0].dtype));
    return Status::ok();
  }

 protected:
  std::unique_ptr<CudaTactic> make(const std::string&) const override { return std::make_unique<IotaTactic>(); }
};

}  // namespace

std::shared_ptr<const TacticFamily> make_iota_family() { return std::make_shared<IotaFamily>(); }

}  // namespace tensoracle::backends::cuda
