// A quality gate (stages 1-3): one comparison of a candidate's outputs with a reference under
// limits, with the failures spelled out (gate, output, limit, value, margin) and the error
// histograms the report draws.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tensoracle/compare.h"

namespace tensoracle::workflow {

struct GateOutcome {
  bool passed = false;
  std::vector<std::string> failures;  // one sentence each: "stage 2 gate, output 'probs': ..."
  nlohmann::json record;              // the report's object for this gate
};

// `gate` names it in every sentence ("stage 1 gate"); `against` says what the reference is
// ("the fixed PyTorch reference", "the accepted fp32 engine 'tinynet'").
Result<GateOutcome> quality_gate(const std::string& gate, const std::string& against, const NamedArrays& candidate,
                                 const NamedArrays& reference, const Limits& limits, const MetricRegistry& registry);

// |c - r| of every finite pair binned on a log axis (5 bins a decade), plus exact zeros and
// non-finite positions: the report's error histogram of one output.
nlohmann::json error_histogram(const ArrayView& candidate, const ArrayView& reference);

// The margin of a violation: " (by 3.2e-04, 1.6x the limit)"; empty without value and threshold.
std::string violation_margin(const Violation& v);

}  // namespace tensoracle::workflow

namespace tensoracle::workflow {

// The limits as the report records them (the effective thresholds of every output named).
nlohmann::json limits_json(const Limits& limits);

}  // namespace tensoracle::workflow
