// bench.h's JSON and text reports.
#include "bench/bench_json.h"

#include <fmt/format.h>

#include <cmath>

namespace tensoracle {

namespace bench {

using nlohmann::json;

json number_json(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return value;
}

namespace {

json optional_json(const std::optional<double>& v) { return v ? number_json(*v) : json(nullptr); }

}  // namespace

json stats_json(const TimingStats& s) {
  return {{"count", s.count},          {"min_ms", s.min_ms}, {"median_ms", s.median_ms}, {"mean_ms", s.mean_ms},
          {"p90_ms", s.p90_ms},        {"p99_ms", s.p99_ms}, {"max_ms", s.max_ms},       {"stddev_ms", s.stddev_ms},
          {"cv", s.cv}};
}

json timing_run_json(const TimingRun& run) {
  return {{"mode", timing_mode_name(run.mode)},
          {"clock", run.clock},
          {"execution", run.execution},
          {"enqueues_per_sample", run.group},
          {"stats", stats_json(run.stats)},
          {"items_per_second", run.items_per_second},
          {"samples_ms", run.samples_ms}};
}

json ratio_json(const RatioInterval& r) {
  return {{"estimate", number_json(r.estimate)}, {"low", number_json(r.low)}, {"high", number_json(r.high)},
          {"confidence", r.confidence},          {"resamples", r.resamples},   {"seed", r.seed},
          {"method", r.method}};
}

json load_check_json(const LoadCheck& l) {
  json processes = json::array();
  for (const GpuProcessUse& p : l.other_processes) processes.push_back({{"pid", p.pid}, {"used_memory_bytes", p.used_memory_bytes}});
  return {{"status", l.status},
          {"reason", l.reason},
          {"isolated", l.isolated},
          {"invalid_reasons", l.invalid_reasons},
          {"notes", l.notes},
          {"gpu_name", l.gpu_name},
          {"pci_bus_id", l.pci_bus_id},
          {"other_processes", processes},
          {"own_process_listed", l.own_process_listed},
          {"utilization_before_percent", optional_json(l.utilization_before_percent)},
          {"utilization_during_max_percent", optional_json(l.utilization_during_max_percent)},
          {"utilization_during_mean_percent", optional_json(l.utilization_during_mean_percent)},
          {"sm_clock_min_mhz", optional_json(l.sm_clock_min_mhz)},
          {"sm_clock_max_mhz", optional_json(l.sm_clock_max_mhz)},
          {"sm_clock_limit_mhz", optional_json(l.sm_clock_limit_mhz)},
          {"clock_event_reasons", l.clock_event_reasons},
          {"samples_before", l.samples_before},
          {"samples_during", l.samples_during},
          {"host_other_cpu_percent", optional_json(l.host_other_cpu_percent)},
          {"host_own_cpu_percent", optional_json(l.host_own_cpu_percent)}};
}

json settings_json(const BenchSettings& s) {
  json modes = json::array();
  for (TimingMode m : s.modes) modes.push_back(timing_mode_name(m));
  return {{"warmup", s.warmup},
          {"iterations", s.iterations},
          {"placements", s.placements},
          {"throughput_group", s.throughput_group},
          {"modes", modes},
          {"load_check", s.load_check},
          {"max_utilization_before_percent", s.max_utilization_before_percent},
          {"max_other_cpu_percent", s.max_other_cpu_percent},
          {"profile", s.profile},
          {"bootstrap", {{"resamples", s.bootstrap.resamples}, {"confidence", s.bootstrap.confidence}, {"seed", s.bootstrap.seed}}}};
}

json layers_json(const std::vector<LayerTiming>& layers) {
  json out = json::array();
  for (const LayerTiming& l : layers)
    out.push_back({{"layers", l.layers}, {"kind", l.kind}, {"tactic", l.tactic}, {"median_ms", l.median_ms}});
  return out;
}

json bench_report_object(const BenchReport& r, const BenchSettings& settings) {
  json runs = json::array();
  for (const TimingRun& run : r.runs) runs.push_back(timing_run_json(run));
  return {{"backend", r.backend},     {"batch", r.batch},
          {"valid", r.valid},         {"settings", settings_json(settings)},
          {"runs", runs},             {"load_check", load_check_json(r.load)},
          {"layers", layers_json(r.layers)}, {"layers_note", r.profile_note}};
}

json ab_report_object(const AbReport& r, const BenchSettings& settings) {
  json runs = json::array();
  for (const AbRun& run : r.runs)
    runs.push_back({{"mode", timing_mode_name(run.mode)},
                    {"candidate", timing_run_json(run.candidate)},
                    {"baseline", timing_run_json(run.baseline)},
                    {"ratio", ratio_json(run.ratio)}});
  return {{"backend", r.backend}, {"batch", r.batch},   {"valid", r.valid}, {"settings", settings_json(settings)},
          {"runs", runs},         {"load_check", load_check_json(r.load)}};
}

std::string describe_clock(const TimingRun& run) {
  const std::string what = run.mode == TimingMode::kLatency
                               ? "each call waited for"
                               : fmt::format("{} call{} back to back per sample", run.group, run.group == 1 ? "" : "s");
  if (run.clock == "steady_clock")
    return "host wall clock (steady_clock; the cpu backend runs each call synchronously), " + what;
  return fmt::format("CUDA events, {}, {}", what,
                     run.execution == "cuda_graph_replay" ? "CUDA graph replay" : "direct launches (no CUDA graph)");
}

}  // namespace bench

namespace {

std::string stats_row(const std::string& label, const TimingRun& run) {
  const TimingStats& s = run.stats;
  return fmt::format("{:<22} {:>7} {:>9.4f} {:>9.4f} {:>9.4f} {:>9.4f} {:>9.4f} {:>9.4f} {:>9.4f} {:>6.3f} {:>11.1f}\n", label,
                     s.count, s.min_ms, s.median_ms, s.mean_ms, s.p90_ms, s.p99_ms, s.max_ms, s.stddev_ms, s.cv,
                     run.items_per_second);
}

std::string stats_header() {
  return fmt::format("{:<22} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>6} {:>11}\n", "mode (ms per call)", "samples",
                     "min", "median", "mean", "p90", "p99", "max", "stddev", "cv", "items/s");
}

std::string load_text(const LoadCheck& l) {
  std::string out;
  if (l.status == "host") {
    out = fmt::format("load check (host CPU time): {}", l.isolated ? "isolated" : "INVALID");
    if (l.host_other_cpu_percent)
      out += fmt::format(", other processes {:.1f}% and this one {:.1f}% of the machine during the run",
                         *l.host_other_cpu_percent, l.host_own_cpu_percent.value_or(0));
    out += "\n";
    for (const std::string& r : l.invalid_reasons) out += "  invalid: " + r + "\n";
  } else if (l.status != "nvml") {
    out = "load check: " + l.reason + " (not claimed isolated)\n";
  } else {
    out = fmt::format("load check (NVML, {} at {}): {}\n", l.gpu_name, l.pci_bus_id, l.isolated ? "isolated" : "INVALID");
    for (const std::string& r : l.invalid_reasons) out += "  invalid: " + r + "\n";
    if (l.utilization_before_percent) out += fmt::format("  utilization before {:g}%", *l.utilization_before_percent);
    if (l.utilization_during_max_percent) out += fmt::format(", during max {:g}%", *l.utilization_during_max_percent);
    if (l.sm_clock_min_mhz)
      out += fmt::format(", SM clock {:g}-{:g} MHz (max {:g})", *l.sm_clock_min_mhz, l.sm_clock_max_mhz.value_or(0),
                         l.sm_clock_limit_mhz.value_or(0));
    out += "\n";
    for (const std::string& n : l.notes) out += "  note: " + n + "\n";
  }
  return out;
}

}  // namespace

std::string bench_report_json(const BenchReport& report, const BenchSettings& settings) {
  return bench::bench_report_object(report, settings).dump(2);
}

std::string ab_report_json(const AbReport& report, const BenchSettings& settings) {
  return bench::ab_report_object(report, settings).dump(2);
}

std::string bench_report_text(const BenchReport& r) {
  std::string out = fmt::format("{} engine, batch {}\n", r.backend, r.batch);
  for (const TimingRun& run : r.runs) out += fmt::format("  {}: {}\n", timing_mode_name(run.mode), bench::describe_clock(run));
  out += stats_header();
  for (const TimingRun& run : r.runs) out += stats_row(std::string(timing_mode_name(run.mode)), run);
  out += load_text(r.load);
  if (!r.layers.empty()) {
    out += "per-step time (each step alone, median):\n";
    for (const LayerTiming& l : r.layers) out += fmt::format("  {:>9.4f} ms  {:<14} {:<28} {}\n", l.median_ms, l.kind, l.tactic, l.layers);
  }
  out += r.valid ? "valid run\n" : "INVALID run: load present (see above)\n";
  return out;
}

std::string ab_report_text(const AbReport& r) {
  std::string out = fmt::format("{} engines, batch {}, candidate and baseline interleaved\n", r.backend, r.batch);
  out += stats_header();
  for (const AbRun& run : r.runs) {
    const std::string mode(timing_mode_name(run.mode));
    out += stats_row(mode + " candidate", run.candidate);
    out += stats_row(mode + " baseline", run.baseline);
  }
  for (const AbRun& run : r.runs)
    out += fmt::format("{}: median ratio candidate/baseline {:.4f} [{:.4f}, {:.4f}] ({:g}% CI), speed-up {:.3f}x\n",
                       timing_mode_name(run.mode), run.ratio.estimate, run.ratio.low, run.ratio.high,
                       100 * run.ratio.confidence, 1 / run.ratio.estimate);
  if (!r.runs.empty()) out += "  " + r.runs.front().ratio.method + "\n";
  out += load_text(r.load);
  out += r.valid ? "valid run\n" : "INVALID run: load present (see above)\n";
  return out;
}

}  // namespace tensoracle
