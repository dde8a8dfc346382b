// The JSON of timing results (schema in docs/bench.md), as objects the workflow report embeds.
#pragma once

#include <nlohmann/json.hpp>

#include "tensoracle/bench.h"

namespace tensoracle::bench {

// A number, or "inf" / "-inf" / "nan" for the values JSON has no numbers for.
nlohmann::json number_json(double value);

nlohmann::json stats_json(const TimingStats& stats);
nlohmann::json timing_run_json(const TimingRun& run);
nlohmann::json ratio_json(const RatioInterval& ratio);
nlohmann::json load_check_json(const LoadCheck& load);
nlohmann::json settings_json(const BenchSettings& settings);
nlohmann::json layers_json(const std::vector<LayerTiming>& layers);
nlohmann::json bench_report_object(const BenchReport& report, const BenchSettings& settings);
nlohmann::json ab_report_object(const AbReport& report, const BenchSettings& settings);

// One line: what the clock and the execution mean ("CUDA events around ..., CUDA graph replay").
std::string describe_clock(const TimingRun& run);

}  // namespace tensoracle::bench
