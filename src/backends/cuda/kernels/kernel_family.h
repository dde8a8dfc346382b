// The base of every family of tensoracle's own kernels (data movement: kernels/data_movement_families.h;
// computing layers: kernels/pointwise_families.h):
//
//   class GatherTactic final : public KernelTactic {
//    public:
//     GatherTactic() : KernelTactic("kernel.gather", "") {}
//     Status initialize(const StepInstance& step, const RunContext&) override { ...; initialized_ = true; ... }
//     Status run(...) override { TO_RETURN_IF_ERROR(require_initialized()); ...launch... }
//   };
//   class GatherFamily final : public KernelFamily {
//    public:
//     GatherFamily() : KernelFamily("kernel.gather") {}
//     Status can_implement(const StepInstance& step, const DeviceInfo&) const override { return check_plain_step(step); }
//     std::unique_ptr<CudaTactic> make(const std::string&) const override { return std::make_unique<GatherTactic>(); }
//   };
//
// A family offers one tactic, or a few named variants of it ("kernel.transpose#tiled"); the
// variant is the tactic's recorded choice ({"variant": "tiled"}, {} for none), so replay rebuilds
// exactly the timed candidate. Tactics do their host work (launch arguments, small device tables)
// in initialize() so that run() only launches.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/cuda_tactic.h"
#include "core/errors.h"

namespace tensoracle::backends::cuda {

class KernelTactic : public CudaTactic {
 public:
  KernelTactic(std::string family, std::string variant) : family_(std::move(family)), variant_(std::move(variant)) {}
  std::string name() const override { return variant_.empty() ? family_ : family_ + "#" + variant_; }
  nlohmann::json choice() const override;

 protected:
  const std::string& variant() const { return variant_; }
  // kFailedPrecondition unless initialize() succeeded (run() first is a planner bug).
  Status require_initialized() const;
  bool initialized_ = false;  // set by the subclass's initialize()

 private:
  std::string family_;
  std::string variant_;
};

class KernelFamily : public TacticFamily {
 public:
  explicit KernelFamily(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  Result<std::vector<std::unique_ptr<CudaTactic>>> candidates(const StepInstance& step, const RunContext& ctx,
                                                              int limit) const override;
  Result<std::unique_ptr<CudaTactic>> replay(const StepInstance& step, const nlohmann::json& choice) const override;

 protected:
  // The variants that apply to `step`, best guess first ({""} for a single tactic).
  virtual std::vector<std::string> variants(const StepInstance&) const { return {""}; }
  virtual std::unique_ptr<CudaTactic> make(const std::string& variant) const = 0;

  // The checks of a step that is one layer: no fused epilogue; every given input and every output
  // static, of rank <= 8, of a size that fits int64 and linear (or nhwc at rank 4 with
  // allow_nhwc); input 0 and the outputs of a floating type (fp32, fp16, bf16) unless `any_type`.
  Status check_layer(const StepInstance& step, bool allow_nhwc = false, bool any_type = false) const;
  // check_layer of any type where no input may be omitted: what data-movement layers need.
  Status check_plain_step(const StepInstance& step, bool allow_nhwc = false) const;

  // kUnsupported "layer '<name>': <family>: <reason>".
  template <typename... Args>
  Status refuse(const StepInstance& step, fmt::format_string<Args...> format, Args&&... args) const {
    return unsupported("layer '{}': {}: {}", step.anchor.node.name, name_, fmt::format(format, std::forward<Args>(args)...));
  }

 private:
  std::string name_;
};

// fp32, fp16 or bf16: the storage types the floating kernels template on.
bool is_kernel_float(DataType type);
// The element count of a static shape (0 when it overflows; can_implement has rejected those).
int64_t elements_in(const Dims& shape);

}  // namespace tensoracle::backends::cuda
