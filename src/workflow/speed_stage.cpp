#include "workflow/speed_stage.h"

#include <fmt/format.h>

#include "bench/bench_json.h"

namespace tensoracle::workflow {

using nlohmann::json;

Result<SpeedOutcome> run_speed_stage(RunContext& ctx, const Engine& baseline, const std::string& baseline_graph,
                                     const std::vector<SpeedCandidate>& candidates) {
  const SpeedStage& s = ctx.pipeline.stage4;
  const auto by_backend = s.backend_min_speedup.find(ctx.backend);
  const double target = by_backend == s.backend_min_speedup.end() ? s.min_speedup : by_backend->second;
  const std::string mode(timing_mode_name(s.mode));
  SpeedOutcome out;
  std::string clock;
  json records = json::array();
  double best = 0;
  for (const SpeedCandidate& c : candidates) {
    ctx.progress(fmt::format("== stage 4: '{}' against '{}' at batch {} ({}, {} rounds interleaved)", c.name, baseline_graph,
                             ctx.timing_batch, mode, s.bench.iterations));
    TO_ASSIGN_OR_RETURN(AbReport ab, bench_ab(c.engine, baseline, views_of(ctx.timing_inputs), s.bench));
    const AbRun& run = ab.runs.front();
    clock = bench::describe_clock(run.baseline);
    const double speedup = 1 / run.ratio.estimate, low = 1 / run.ratio.high, high = 1 / run.ratio.low;
    std::vector<std::string> failures;
    if (!ab.valid)
      failures.push_back(fmt::format("stage 4 load check: the timing is invalid: {}", fmt::join(ab.load.invalid_reasons, "; ")));
    if (low < target) {
      failures.push_back(fmt::format(
          "stage 4 speed target: speed-up {:.3f}x ({} medians, baseline / candidate), {:g}% interval [{:.3f}, {:.3f}]; "
          "the target is {:g}x, missed by {:.3f}{}",
          speedup, mode, 100 * run.ratio.confidence, low, high, target, target - low,
          speedup >= target ? " at the interval's lower end (the estimate alone would meet it: measure longer)" : ""));
    }
    const bool accepted = failures.empty();
    ctx.progress(accepted ? fmt::format("   accepted: {:.3f}x [{:.3f}, {:.3f}]", speedup, low, high) : "   REJECTED: " + failures.front());
    out.summary += fmt::format("stage 4  {:<26} {:<9} {}\n", c.name, accepted ? "accepted" : "REJECTED",
                               accepted ? fmt::format("speed-up {:.3f}x [{:.3f}, {:.3f}] >= {:g}x", speedup, low, high, target)
                                        : failures.front());
    json record = {{"name", c.name},
                   {"passed_quality_in_stage", c.stage},
                   {"engine", c.graph},
                   {"speedup", {{"estimate", bench::number_json(speedup)}, {"low", bench::number_json(low)}, {"high", bench::number_json(high)}}},
                   {"target", target},
                   {"timing", bench::ab_report_object(ab, s.bench)},
                   {"decision", accepted ? "accepted" : "rejected"},
                   {"failures", failures}};
    if (ab.load.status == "unavailable" || ab.load.status == "off") record["isolation"] = "not claimed: " + ab.load.reason;
    records.push_back(std::move(record));
    if (accepted && speedup > best) {
      best = speedup;
      out.chosen = c.name;
      out.chosen_graph = c.graph;
    }
  }
  out.record = {{"stage", 4},
                {"name", "speed"},
                {"ran", true},
                {"target", {{"min_speedup", target},
                            {"backend", ctx.backend},
                            {"mode", mode},
                            {"batch", ctx.timing_batch},
                            {"rule", "accepted when the run is valid and the lower end of the speed-up's confidence "
                                     "interval reaches the target"}}},
                {"baseline", baseline_graph},
                {"clock", clock},
                {"candidates", records},
                {"decision", out.chosen.empty() ? "rejected" : "accepted"}};
  return out;
}

json engine_layers(RunContext& ctx, const Engine& engine, const std::string& graph) {
  BenchSettings settings = ctx.pipeline.stage4.bench;
  settings.iterations = 2;
  settings.warmup = 2;
  settings.modes = {TimingMode::kLatency};
  settings.load_check = false;
  settings.profile_layers = true;
  json out = {{"graph", graph}, {"layers", json::array()}, {"note", ""}};
  auto report = bench_engine(engine, views_of(ctx.timing_inputs), settings);
  if (!report.is_ok()) {
    out["note"] = "not available: " + report.status().message();
  } else if (report->layers.empty()) {
    // A host engine (the cpu reference backend) runs its whole network in one call.
    out["note"] = report->runs.front().clock == "steady_clock"
                      ? "not available on the " + ctx.backend + " backend: it runs the whole network in one call and has no per-step timer"
                      : "not available: " + report->profile_note;
  } else {
    out["layers"] = bench::layers_json(report->layers);
    out["note"] = "each step timed alone (median of " + std::to_string(settings.profile_iterations) + "), outside the CUDA graph";
  }
  return out;
}

}  // namespace tensoracle::workflow
