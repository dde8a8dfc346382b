// Stage 4 (workflow.h): each candidate that passed its quality gates timed against the accepted
// fp32 engine, interleaved on the same inputs, and judged against the speed target.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "workflow/run_context.h"

namespace tensoracle::workflow {

struct SpeedCandidate {
  std::string name;
  int stage = 0;       // where it passed: 2 or 3
  std::string graph;   // the graph of the engine timed
  Engine engine;
};

struct SpeedOutcome {
  nlohmann::json record;  // the report's stage-4 object
  std::string chosen;     // the fastest candidate that met the target; empty when none did
  std::string chosen_graph;
  std::string summary;    // one line per candidate
};

// The speed-up of a candidate is median(baseline) / median(candidate) in the pipeline's timing
// mode; it meets the target when the lower end of its confidence interval reaches it and the
// run is valid (no load seen).
Result<SpeedOutcome> run_speed_stage(RunContext& ctx, const Engine& baseline, const std::string& baseline_graph,
                                     const std::vector<SpeedCandidate>& candidates);

// Per-step times of `engine` on the timing inputs (cuda: Execution::profile_layers), or a note
// saying why there are none: the report's "where the time goes" of the implementation in use.
nlohmann::json engine_layers(RunContext& ctx, const Engine& engine, const std::string& graph);

}  // namespace tensoracle::workflow
