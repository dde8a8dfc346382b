// One step of an engine timed on its own: what Execution::profile_layers (engine.h) returns, and
// what a backend's execution measures.
//
//   TO_ASSIGN_OR_RETURN(std::vector<LayerTiming> steps, exec.profile_layers(stream, 20));
//   for (const LayerTiming& s : steps) std::printf("%8.3f ms  %s (%s)\n", s.median_ms, s.layers.c_str(), s.tactic.c_str());
#pragma once

#include <string>

namespace tensoracle {

struct LayerTiming {
  std::string layers;  // the graph layers the step computes, fused ones joined by '+' ("conv1+relu_1")
  std::string kind;    // the op kind of the step's main layer
  std::string tactic;
  double median_ms = 0;
};

}  // namespace tensoracle
