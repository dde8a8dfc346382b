// Shared pieces of the data-movement tactic families (reshape, transpose, concat, slice, pad,
// gather, top-k, resize, grid sample, pooling): one file per family, each made by a factory
// below and registered in op_families.h.
//
// A family offers one tactic, or a few named variants of it ("kernel.transpose#tiled"); the
// variant is the tactic's recorded choice, so replay rebuilds exactly the timed candidate.
// Tactics compute their launch parameters in initialize() (host work, small device tables) so
// that run() only launches.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/cuda_tactic.h"
#include "core/errors.h"

namespace tensoracle::backends::cuda {

class DataMovementTactic : public CudaTactic {
 public:
  DataMovementTactic(std::string family, std::string variant) : family_(std::move(family)), variant_(std::move(variant)) {}
  std::string name() const override { return variant_.empty() ? family_ : family_ + "#" + variant_; }
  nlohmann::json choice() const override;

 protected:
  const std::string& variant() const { return variant_; }
  // kFailedPrecondition unless initialize() succeeded (run() before initialize() is a planner bug).
  Status require_initialized(bool initialized) const;

 private:
  std::string family_;
  std::string variant_;
};

class DataMovementFamily : public TacticFamily {
 public:
  explicit DataMovementFamily(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  Result<std::vector<std::unique_ptr<CudaTactic>>> candidates(const StepInstance& step, const RunContext& ctx,
                                                              int limit) const override;
  Result<std::unique_ptr<CudaTactic>> replay(const StepInstance& step, const nlohmann::json& choice) const override;

 protected:
  // The variants that apply to `step`, best guess first ({""} for a single-tactic family).
  virtual std::vector<std::string> variants(const StepInstance&) const { return {""}; }
  virtual std::unique_ptr<CudaTactic> make(const std::string& variant) const = 0;

  // The checks every data-movement family makes: no fused epilogue, every input and output
  // present and linear (or, with allow_nhwc, nhwc where rank 4), ranks within the kernels'
  // limit. kUnsupported naming the layer and the reason.
  Status check_plain_step(const StepInstance& step, bool allow_nhwc = false) const;
  // kUnsupported "layer '<name>': <family>: <reason>".
  template <typename... Args>
  Status refuse(const StepInstance& step, fmt::format_string<Args...> format, Args&&... args) const {
    return unsupported("layer '{}': {}: {}", step.anchor.node.name, name_, fmt::format(format, std::forward<Args>(args)...));
  }

 private:
  std::string name_;
};

// Elements of a static shape (steps have concrete shapes; 0 if the count does not fit int64).
inline int64_t elements_of(const Dims& shape) {
  const Result<int64_t> n = shape.element_count();
  return n.is_ok() ? *n : 0;
}

// The families, by the layer kind each implements.
std::shared_ptr<const TacticFamily> make_reshape_family();      // kReshape   "kernel.reshape"
std::shared_ptr<const TacticFamily> make_transpose_family();    // kTranspose "kernel.transpose"
std::shared_ptr<const TacticFamily> make_concat_family();       // kConcat    "kernel.concat"
std::shared_ptr<const TacticFamily> make_slice_family();        // kSlice     "kernel.slice"
std::shared_ptr<const TacticFamily> make_pad_family();          // kPad       "kernel.pad"
std::shared_ptr<const TacticFamily> make_gather_family();       // kGather    "kernel.gather"
std::shared_ptr<const TacticFamily> make_top_k_family();        // kTopK      "kernel.top_k"
std::shared_ptr<const TacticFamily> make_resize_family();       // kResize    "kernel.resize"
std::shared_ptr<const TacticFamily> make_grid_sample_family();  // kGridSample "kernel.grid_sample"
std::shared_ptr<const TacticFamily> make_pooling_family();      // kPooling   "kernel.pooling"

}  // namespace tensoracle::backends::cuda
