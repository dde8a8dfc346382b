// bench_engine and bench_ab (bench.h): warm-up, the timed samples of each mode, the load check
// around them, and the A/B interleaving.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "bench/host_load.h"
#include "bench/load_check.h"
#include "bench/timed_execution.h"
#include "core/errors.h"

namespace tensoracle {

std::string_view timing_mode_name(TimingMode mode) { return mode == TimingMode::kLatency ? "latency" : "throughput"; }

Result<TimingMode> parse_timing_mode(std::string_view name) {
  if (name == "latency") return TimingMode::kLatency;
  if (name == "throughput") return TimingMode::kThroughput;
  return invalid_argument("unknown timing mode '{}' (latency, throughput)", name);
}

namespace {

Status check_settings(const BenchSettings& s) {
  if (s.warmup < 0) return invalid_argument("warm-up {} (must be >= 0)", s.warmup);
  if (s.iterations < 2) return invalid_argument("iterations {} (at least 2 timed samples)", s.iterations);
  if (s.throughput_group < 1) return invalid_argument("throughput group {} (must be >= 1)", s.throughput_group);
  if (s.modes.empty()) return invalid_argument("no timing mode chosen (latency, throughput)");
  if (s.profile_layers && s.profile_iterations < 1)
    return invalid_argument("profile iterations {} (must be >= 1)", s.profile_iterations);
  return Status::ok();
}

int64_t batch_of(const Engine& engine, const NamedArrayViews& inputs) {
  const std::vector<std::string> names = engine.input_names();
  if (names.empty()) return 1;
  auto it = inputs.find(names.front());
  return it == inputs.end() || it->second.shape.rank() == 0 ? 1 : it->second.shape[0];
}

// The load check around a run: NVML's recorder where it can be used, else a verdict saying why not.
class LoadSession {
 public:
  LoadSession(const BenchSettings& settings, const std::string& pci_bus_id) {
    if (!settings.load_check) {
      fixed_ = {"off", "the load check was turned off"};
    } else if (pci_bus_id.empty()) {
      auto ticks = bench::read_host_cpu_ticks();
      if (ticks.is_ok()) host_ = {*ticks, settings.max_other_cpu_percent};
      else fixed_ = {"unavailable", ticks.status().message()};
    } else if (auto monitor = bench::open_nvml_monitor(pci_bus_id); !monitor.is_ok()) {
      fixed_ = {"unavailable", "NVML unavailable: " + monitor.status().message()};
    } else {
      bench::LoadThresholds thresholds;
      thresholds.max_utilization_before_percent = settings.max_utilization_before_percent;
      recorder_ = bench::LoadRecorder::start(*std::move(monitor), thresholds);
    }
  }
  LoadCheck finish() {
    if (recorder_) return recorder_->finish();
    if (host_) {
      auto after = bench::read_host_cpu_ticks();
      if (after.is_ok()) return bench::evaluate_host_load(host_->first, *after, host_->second);
      fixed_ = {"unavailable", after.status().message()};
    }
    LoadCheck check;
    check.status = fixed_.first;
    check.reason = fixed_.second;
    return check;
  }

 private:
  std::unique_ptr<bench::LoadRecorder> recorder_;
  std::optional<std::pair<bench::HostCpuTicks, double>> host_;
  std::pair<std::string, std::string> fixed_;
};

Status finish_run(TimingRun& run, int64_t batch) {
  TO_ASSIGN_OR_RETURN(run.stats, summarize_samples(run.samples_ms));
  run.items_per_second = run.stats.mean_ms > 0 ? static_cast<double>(batch) * 1000.0 / run.stats.mean_ms : 0.0;
  return Status::ok();
}

TimingRun new_run(TimingMode mode, const bench::TimedExecution& timed, const BenchSettings& settings) {
  TimingRun run;
  run.mode = mode;
  run.clock = timed.clock();
  run.group = mode == TimingMode::kLatency ? 1 : settings.throughput_group;
  return run;
}

}  // namespace

Result<BenchReport> bench_engine(const Engine& engine, const NamedArrayViews& inputs, const BenchSettings& settings) {
  TO_RETURN_IF_ERROR(check_settings(settings));
  TO_ASSIGN_OR_RETURN(auto timed, bench::make_timed_execution(engine, inputs, settings.profile));
  BenchReport report;
  report.backend = engine.backend();
  report.batch = batch_of(engine, inputs);
  LoadSession load(settings, timed->pci_bus_id());
  TO_RETURN_IF_ERROR(timed->warm_up(settings.warmup).with_context("warm-up"));
  for (TimingMode mode : settings.modes) {
    TimingRun run = new_run(mode, *timed, settings);
    TO_RETURN_IF_ERROR(timed->time(mode, settings.iterations, run.group, run.samples_ms)
                           .with_context(fmt::format("timing ({})", timing_mode_name(mode))));
    run.execution = timed->execution();
    TO_RETURN_IF_ERROR(finish_run(run, report.batch));
    report.runs.push_back(std::move(run));
  }
  report.load = load.finish();
  report.valid = report.load.invalid_reasons.empty();
  if (settings.profile_layers) {
    auto layers = timed->profile_layers(settings.profile_iterations);
    if (layers.is_ok()) report.layers = *std::move(layers);
    else report.profile_note = layers.status().message();
  } else {
    report.profile_note = "not asked for";
  }
  return report;
}

Result<AbReport> bench_ab(const Engine& candidate, const Engine& baseline, const NamedArrayViews& inputs,
                          const BenchSettings& settings) {
  if (settings.placements < 1) return invalid_argument("placements {} (must be >= 1)", settings.placements);
  // At most iterations / 2 placements, so that each has two rounds.
  const size_t k = static_cast<size_t>(std::max(1, std::min(settings.placements, settings.iterations / 2)));
  return bench_ab(std::vector<const Engine*>(k, &candidate), std::vector<const Engine*>(k, &baseline), inputs, settings);
}

Result<AbReport> bench_ab(const std::vector<const Engine*>& candidate_placements,
                          const std::vector<const Engine*>& baseline_placements, const NamedArrayViews& inputs,
                          const BenchSettings& settings) {
  TO_RETURN_IF_ERROR(check_settings(settings));
  if (candidate_placements.empty() || candidate_placements.size() != baseline_placements.size())
    return invalid_argument("A/B timing needs as many candidate placements as baseline placements (at least one), got {} and {}",
                            candidate_placements.size(), baseline_placements.size());
  const size_t placements = candidate_placements.size();
  if (static_cast<size_t>(settings.iterations) < 2 * placements)
    return invalid_argument("A/B timing over {} placements needs at least {} rounds, got {}", placements, 2 * placements,
                            settings.iterations);
  const Engine& candidate = *candidate_placements.front();
  for (const Engine* e : baseline_placements) {
    if (e->backend() != candidate.backend())
      return invalid_argument("A/B timing of a {} engine against a {} engine: both must run on one backend",
                              candidate.backend(), e->backend());
  }
  // Each placement: its own execution, device buffers and stream.
  std::vector<std::unique_ptr<bench::TimedExecution>> c, b;
  for (size_t p = 0; p < placements; ++p) {
    auto timed_candidate = bench::make_timed_execution(*candidate_placements[p], inputs, settings.profile);
    if (!timed_candidate.is_ok()) return timed_candidate.status().with_context(fmt::format("candidate placement {}", p));
    c.push_back(*std::move(timed_candidate));
    auto timed_baseline = bench::make_timed_execution(*baseline_placements[p], inputs, settings.profile);
    if (!timed_baseline.is_ok()) return timed_baseline.status().with_context(fmt::format("baseline placement {}", p));
    b.push_back(*std::move(timed_baseline));
  }

  AbReport report;
  report.backend = candidate.backend();
  report.batch = batch_of(candidate, inputs);
  LoadSession load(settings, c.front()->pci_bus_id());
  for (size_t p = 0; p < placements; ++p) {
    TO_RETURN_IF_ERROR(b[p]->warm_up(settings.warmup).with_context("baseline warm-up"));
    TO_RETURN_IF_ERROR(c[p]->warm_up(settings.warmup).with_context("candidate warm-up"));
  }
  for (TimingMode mode : settings.modes) {
    AbRun run;
    run.mode = mode;
    run.candidate = new_run(mode, *c.front(), settings);
    run.baseline = new_run(mode, *b.front(), settings);
    std::vector<int> placement_of_round;
    // Round i runs on placement i % placements (so slow drift spreads over all of them); each
    // placement's rounds alternate B A, A B, B A, ...: each side goes first in half of them.
    for (int i = 0; i < settings.iterations; ++i) {
      const size_t p = static_cast<size_t>(i) % placements;
      placement_of_round.push_back(static_cast<int>(p));
      const bool baseline_first = (i / static_cast<int>(placements)) % 2 == 0;
      for (int k = 0; k < 2; ++k) {
        const bool is_baseline = (k == 0) == baseline_first;
        bench::TimedExecution& side = is_baseline ? *b[p] : *c[p];
        TimingRun& into = is_baseline ? run.baseline : run.candidate;
        TO_RETURN_IF_ERROR(side.time(mode, 1, into.group, into.samples_ms)
                               .with_context(fmt::format("{} ({})", is_baseline ? "baseline" : "candidate",
                                                         timing_mode_name(mode))));
      }
    }
    run.candidate.execution = c.front()->execution();
    run.baseline.execution = b.front()->execution();
    TO_RETURN_IF_ERROR(finish_run(run.candidate, report.batch));
    TO_RETURN_IF_ERROR(finish_run(run.baseline, report.batch));
    TO_ASSIGN_OR_RETURN(run.ratio, bootstrap_median_ratio(run.candidate.samples_ms, run.baseline.samples_ms,
                                                          settings.bootstrap, placement_of_round));
    report.runs.push_back(std::move(run));
  }
  report.load = load.finish();
  report.valid = report.load.invalid_reasons.empty();
  return report;
}

}  // namespace tensoracle
