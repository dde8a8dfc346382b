// Choosing a step's tactic at build time: every accepting family's candidates (up to a limit)
// are initialized and timed on scratch buffers (seeded inputs in [-1, 1], NaN-poisoned outputs)
// with CUDA events after warm-up; the fastest median wins. A candidate that fails to initialize
// or run, or whose output disagrees beyond rounding with the reference (the candidate of a
// reference family, our own kernel, where one implements the step; else the first working
// candidate), is skipped with a line in the build log; one that falls far behind the best so far
// stops early. A lone candidate (optimization level 0) is checked but not timed.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/cuda_tactic.h"
#include "backends/cuda/device.h"

namespace tensoracle::backends::cuda {

// One timed candidate: its name, median and whether it runs a Q/DQ step's quantize/dequantize
// layers explicitly (CudaTactic::runs_quantization_explicitly).
struct CandidateTime {
  std::string tactic;
  double median_ms = 0;
  bool explicit_quantization = false;
};

struct ChosenTactic {
  std::string family;
  std::unique_ptr<CudaTactic> tactic;
  double median_ms = -1;  // -1: not timed (the only candidate, a replayed choice, or the reference after every candidate failed)
  std::vector<CandidateTime> timed;  // every candidate that ran, in the order timed
};

// The build log's line for a step that fuses quantize/dequantize layers whose chosen tactic runs
// them explicitly, saying why: "<label>: Q/DQ run explicitly by <tactic> (<t> ms): faster than
// every fused candidate (the fastest, <tactic>, <t> ms)", or that no fused candidate ran, or that
// the choice was not timed. Empty for any other choice.
std::string explicit_quantization_note(const StepInstance& step, const ChosenTactic& chosen, const std::string& label);

// Buffers for `step` carved from one device allocation (the timer's scratch, or a test's).
StepBuffers step_buffers_in(const StepInstance& step, void* base, size_t* used);
// The bytes step_buffers_in needs for `step` (256-byte aligned pieces).
size_t step_buffer_bytes(const StepInstance& step);

// Ok when a candidate's output 0 (as doubles) agrees with the reference's on the same inputs within
// a bound for `type` far above rounding differences between algorithms and far below a wrong result.
Status agrees_with_reference(DataType type, const std::vector<double>& candidate, const std::vector<double>& reference);

class TacticTimer {
 public:
  TacticTimer(int iterations, uint64_t workspace_limit) : iterations_(std::max(iterations, 1)), workspace_limit_(workspace_limit) {}
  ~TacticTimer();
  Status start(const DeviceInfo& device);

  // `replay` (by anchor layer name) names a recorded choice to use instead of timing.
  Result<ChosenTactic> choose(const StepInstance& step, const std::vector<const TacticFamily*>& families, int limit,
                              const std::map<std::string, std::pair<std::string, nlohmann::json>>& replay,
                              const std::string& label, std::vector<std::string>& log);

 private:
  Status prepare_step(const StepInstance& step);
  // Initializes `tactic`, runs it on the step's inputs into poisoned outputs and checks the result
  // against the reference (the first call sets it); the buffers it ran with come back.
  Result<StepBuffers> run_checked(CudaTactic& tactic, const StepInstance& step, const RunContext& ctx);
  Result<double> time(CudaTactic& tactic, const StepInstance& step, double best_ms);
  Status check_against_reference(const CudaTactic& tactic);

  int iterations_;
  uint64_t workspace_limit_;
  DeviceInfo device_;
  std::unique_ptr<LibraryHandles> handles_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t begin_ = nullptr, end_ = nullptr;
  DeviceBuffer io_;         // the step's inputs and outputs
  DeviceBuffer workspace_;  // the candidate's workspace
  StepBuffers buffers_;
  std::vector<double> reference_;  // output 0 of the reference family's candidate, else of the first working one
  std::string reference_tactic_;
};

}  // namespace tensoracle::backends::cuda
