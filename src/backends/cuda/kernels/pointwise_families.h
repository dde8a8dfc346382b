// The own-kernel families for computing layers: pointwise chains, softmax, reduce, the norms and
// Q/DQ. Each family is one file made by a factory below; op_families.h registers them.
//
// A family offers one tactic or a few named variants of it ("kernel.softmax#block512"); the
// variant is the recorded choice, so replay rebuilds exactly the timed candidate. Tactics do
// their host work (launch arguments) in initialize() so that run() only launches.
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
  bool initialized_ = false;

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
  // static, of rank <= 8 and linear (or nhwc at rank 4 with allow_nhwc); input 0 and the outputs
  // of a floating type (fp32, fp16, bf16) unless `any_type`.
  Status check_layer(const StepInstance& step, bool allow_nhwc = false, bool any_type = false) const;

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

std::shared_ptr<const TacticFamily> make_pointwise_family();      // elementwise, unary, activation, cast, select
std::shared_ptr<const TacticFamily> make_softmax_family();        // kSoftmax "kernel.softmax"
std::shared_ptr<const TacticFamily> make_reduce_family();         // kReduce "kernel.reduce"
std::shared_ptr<const TacticFamily> make_layer_norm_family();     // kLayerNorm "kernel.layer_norm"
std::shared_ptr<const TacticFamily> make_rms_norm_family();       // kRmsNorm "kernel.rms_norm"
std::shared_ptr<const TacticFamily> make_group_norm_family();     // kGroupNorm "kernel.group_norm"
std::shared_ptr<const TacticFamily> make_instance_norm_family();  // kInstanceNorm "kernel.instance_norm"
std::shared_ptr<const TacticFamily> make_batch_norm_family();     // kBatchNorm "kernel.batch_norm"
std::shared_ptr<const TacticFamily> make_quantize_family();       // kQuantize "kernel.quantize"
std::shared_ptr<const TacticFamily> make_dequantize_family();     // kDequantize "kernel.dequantize"

}  // namespace tensoracle::backends::cuda
