// Stage 2's model-specific measures (workflow.h MeasureSpec) as compare metrics: a registry that
// computes them and limits that bound them, so the gate treats them like every other limit.
#pragma once

#include <string>
#include <vector>

#include "tensoracle/compare.h"
#include "tensoracle/workflow.h"

namespace tensoracle::workflow {

// The built-in metrics plus one metric per measure, named after it. Errors when a measure's name
// is a built-in metric of another kind.
Result<MetricRegistry> measure_registry(const std::vector<MeasureSpec>& measures, const std::string& scratch_directory);

// `limits` with each measure's bounds added to the outputs it names (all of `outputs` when it
// names none). Errors on a measure naming an output not in `outputs`.
Result<Limits> limits_with_measures(Limits limits, const std::vector<MeasureSpec>& measures,
                                    const std::vector<std::string>& outputs);

// Runs an external measure: writes both arrays as .npy files under `scratch_directory`, runs
// `command` ("{candidate}" / "{reference}" replaced by their paths; both appended when neither
// appears) with stdin closed and stderr passed through, and reads one JSON number from stdout.
// Errors name the command and say what went wrong (exit status, timeout, not a number).
Result<double> run_external_measure(const MeasureSpec& measure, const ArrayView& candidate, const ArrayView& reference,
                                    const std::string& scratch_directory);

}  // namespace tensoracle::workflow
