// The timing harness (docs/bench.md): how long an engine takes, how sure that number is, and whether
// anything else was using the GPU while it was measured.
//
//   BenchSettings settings;                       // warm-up, iterations, modes, load check
//   TO_ASSIGN_OR_RETURN(BenchReport one, bench_engine(engine, views_of(inputs), settings));
//   one.runs[0].stats.median_ms;                  // per mode: min/median/mean/p90/p99/max/stddev/cv
//   one.valid;                                    // false when the load check saw other work
//
//   TO_ASSIGN_OR_RETURN(AbReport ab, bench_ab(candidate, baseline, views_of(inputs), settings));
//   ab.runs[0].ratio.estimate;                    // median(candidate) / median(baseline)
//   ab.runs[0].ratio.low, ab.runs[0].ratio.high;  // its confidence interval
//
// What is timed (docs/bench.md has the full story):
// - cuda engines: inputs and outputs live in device memory bound once; a non-blocking stream;
//   `warmup` enqueues first (the first captures the engine into a CUDA graph that later ones
//   replay: TimingRun::execution says whether they did). Two modes:
//     latency     per call: event, enqueue, event, synchronize — what one request sees;
//     throughput  `throughput_group` enqueues back to back between two events, samples back to
//                 back too — what a busy stream sustains (group 1: each enqueue between two events
//                 without synchronizing, the method of scripts/torch-baseline.py).
// - cpu engines: host wall clock (std::chrono::steady_clock) around the same calls; enqueue runs
//   synchronously there, so both modes time the computation itself. TimingRun::clock says which.
// - Every sample is converted to milliseconds per enqueue. Statistics: min, median, mean, p90,
//   p99, max (percentiles by linear interpolation between closest ranks, NumPy's default),
//   stddev (sample, n - 1), coefficient of variation stddev / mean; items per second = batch *
//   1000 / mean ms.
// - A/B (bench_ab): candidate and baseline alternate sample by sample in one process on the same
//   inputs (rounds B A, A B, B A, ...: each side goes first equally often); the ratio of medians
//   candidate / baseline gets a percentile-bootstrap confidence interval over the rounds
//   (bootstrap_median_ratio), so drift shared by both sides within a round cancels. Each side runs
//   on `placements` executions with their own device memory (and, given several engines, their
//   own weights), round i on placement i % placements: where a tensor lands in memory moves an
//   engine's time by a few tenths of a percent on a GPU, so one placement per side would report
//   that as a difference between the engines. The bootstrap resamples placements, then rounds
//   within them, so the interval includes it.
// - The load check (cuda): NVML, opened at run time (libnvidia-ml.so.1 from the driver); before
//   the run and every 100 ms during it: other compute processes on the GPU, GPU utilization
//   before the run, SM clock and clock-event (throttle) reasons. Another process, utilization
//   above the threshold before the run, or a thermal / hardware slowdown marks the run invalid
//   with the reason. Without NVML the run is reported "NVML unavailable: <reason>" and not
//   claimed isolated.
// - The load check (cpu): the host's CPU time (/proc/stat) during the run less this process's;
//   other processes above `max_other_cpu_percent` of the machine mark the run invalid.
//
// Thread safety: the functions create their own executions and streams; an Engine may be shared.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensoracle/array.h"
#include "tensoracle/engine.h"
#include "tensoracle/status.h"

namespace tensoracle {

// ---- Statistics ----

struct TimingStats {
  int64_t count = 0;
  double min_ms = 0, median_ms = 0, mean_ms = 0, p90_ms = 0, p99_ms = 0, max_ms = 0;
  double stddev_ms = 0;  // sample standard deviation (n - 1); 0 for one sample
  double cv = 0;         // stddev / mean; 0 when the mean is 0
};

// The statistics of `samples_ms`; errors when empty or when a sample is negative or not finite.
Result<TimingStats> summarize_samples(const std::vector<double>& samples_ms);
// The q-th percentile (0..100) of sorted values by linear interpolation between closest ranks
// (numpy.percentile's default). Precondition: non-empty and sorted.
double percentile_of_sorted(const std::vector<double>& sorted, double q);

struct BootstrapSettings {
  int resamples = 2000;
  double confidence = 0.95;  // in (0, 1)
  uint64_t seed = 1;         // the resampling is deterministic for a seed (std::mt19937_64)
};

// A ratio with its confidence interval.
struct RatioInterval {
  double estimate = 1.0;  // median(candidate) / median(baseline) over every sample
  double low = 1.0;
  double high = 1.0;
  double confidence = 0.95;
  int resamples = 0;
  uint64_t seed = 0;
  std::string method;  // one sentence: what was resampled and how the interval was read off
};

// Percentile bootstrap of median(candidate) / median(baseline) over paired rounds: round i holds
// candidate[i] and baseline[i], measured back to back; each resample draws as many rounds with
// replacement, and the interval is read off the resampled ratios at (1 - confidence) / 2 and
// (1 + confidence) / 2. With `clusters` (one id per round: the placement it ran on), a resample
// first draws as many clusters as there are with replacement, then each drawn cluster's rounds
// with replacement (a two-stage bootstrap), so variation between clusters widens the interval.
// Errors when the sizes differ, there are fewer than 2 rounds, a baseline median is 0, or the
// settings are out of range.
Result<RatioInterval> bootstrap_median_ratio(const std::vector<double>& candidate, const std::vector<double>& baseline,
                                             const BootstrapSettings& settings, const std::vector<int>& clusters = {});

// ---- The load check ----

struct GpuProcessUse {
  uint32_t pid = 0;
  uint64_t used_memory_bytes = 0;  // 0 when NVML does not say
};

struct LoadCheck {
  // "nvml" (a GPU, checked), "host" (a cpu engine: other processes' CPU time checked),
  // "unavailable" (the check could not be made: see reason), "off" (not asked for).
  std::string status;
  std::string reason;       // for unavailable / not_applicable / off
  bool isolated = false;    // checked and nothing else was seen
  std::vector<std::string> invalid_reasons;  // why the run is invalid (empty: it is not)
  std::vector<std::string> notes;            // seen but not invalidating (e.g. a power cap)
  // What was seen.
  std::string gpu_name;
  std::string pci_bus_id;
  std::vector<GpuProcessUse> other_processes;  // union over before and during
  bool own_process_listed = false;             // whether NVML listed this process's pid
  std::optional<double> utilization_before_percent;      // max over the samples before
  std::optional<double> utilization_during_max_percent;  // includes this run's own work
  std::optional<double> utilization_during_mean_percent;
  std::optional<double> sm_clock_min_mhz, sm_clock_max_mhz;  // during
  std::optional<double> sm_clock_limit_mhz;                  // the GPU's maximum SM clock
  std::vector<std::string> clock_event_reasons;  // seen during the run (NVML names, lower case)
  int samples_before = 0, samples_during = 0;
  // host: the share of the machine's CPU time (all hardware threads) used during the run.
  std::optional<double> host_other_cpu_percent;
  std::optional<double> host_own_cpu_percent;
};

// ---- Timing ----

enum class TimingMode { kLatency, kThroughput };
std::string_view timing_mode_name(TimingMode mode);  // "latency", "throughput"
Result<TimingMode> parse_timing_mode(std::string_view name);

struct BenchSettings {
  int warmup = 10;             // enqueues per execution before timing
  int iterations = 100;        // timed samples per mode (per side for bench_ab)
  int placements = 8;          // bench_ab: executions per side, each with its own memory (see above)
  int throughput_group = 10;   // enqueues per throughput sample
  std::vector<TimingMode> modes = {TimingMode::kLatency, TimingMode::kThroughput};
  bool load_check = true;
  double max_utilization_before_percent = 10.0;
  double max_other_cpu_percent = 10.0;
  // Also time each step of the engine alone (Execution::profile_layers; cuda only).
  bool profile_layers = false;
  int profile_iterations = 20;
  BootstrapSettings bootstrap;
  size_t profile = 0;  // the engine's optimization profile
};

struct TimingRun {
  TimingMode mode = TimingMode::kLatency;
  std::string clock;      // "cuda_events" or "steady_clock"
  std::string execution;  // "cuda_graph_replay", "cuda_direct" (not captured) or "host"
  int group = 1;          // enqueues per sample
  std::vector<double> samples_ms;  // per enqueue, in measurement order
  TimingStats stats;
  double items_per_second = 0;
};

struct BenchReport {
  std::string backend;
  int64_t batch = 0;  // dim 0 of the first input: the items of one enqueue
  std::vector<TimingRun> runs;  // one per mode, in settings order
  LoadCheck load;
  bool valid = true;  // load.invalid_reasons is empty
  // Per-step times (settings.profile_layers); empty with profile_note saying why when absent.
  std::vector<LayerTiming> layers;
  std::string profile_note;
};

struct AbRun {
  TimingMode mode = TimingMode::kLatency;
  TimingRun candidate;
  TimingRun baseline;
  RatioInterval ratio;  // candidate / baseline: < 1 means the candidate is faster
};

struct AbReport {
  std::string backend;
  int64_t batch = 0;
  std::vector<AbRun> runs;
  LoadCheck load;
  bool valid = true;
};

// Times `engine` on `inputs` (host arrays by engine input name; copied to the engine's memory).
// Errors name a missing input or a failing call; a loaded GPU is not an error (valid = false).
Result<BenchReport> bench_engine(const Engine& engine, const NamedArrayViews& inputs, const BenchSettings& settings);

// Times two engines of one backend with the same I/O, interleaved (see above), on
// settings.placements executions of each (at most iterations / 2, so each has two rounds).
Result<AbReport> bench_ab(const Engine& candidate, const Engine& baseline, const NamedArrayViews& inputs,
                          const BenchSettings& settings);
// The same with the placements given as engines: copies of one engine file each (so their
// weights are placed apart too), all of one side with the same I/O. settings.placements is not
// used: each list has as many placements as engines, and both lists need the same number.
Result<AbReport> bench_ab(const std::vector<const Engine*>& candidate_placements,
                          const std::vector<const Engine*>& baseline_placements, const NamedArrayViews& inputs,
                          const BenchSettings& settings);

// ---- Inputs ----

// `inputs` with dim 0 of every array changed to `batch`: rows repeat cyclically (2 rows to 5:
// 0 1 0 1 0) or the first `batch` rows are kept. Errors on a rank-0 array or an empty dim 0.
Result<NamedArrays> arrays_at_batch(const NamedArrayViews& inputs, int64_t batch);
// Inputs for every engine input at the profile's opt shape (dim 0 replaced by `batch` when > 0):
// floating point uniform in [-1, 1) from a fixed seed, integers and bool 0 (a valid index or mask).
Result<NamedArrays> synthetic_inputs(const Engine& engine, size_t profile = 0, int64_t batch = 0);

// ---- Reports ----

// One JSON object each (schema in docs/bench.md); non-finite numbers as "inf"/"nan" strings.
std::string bench_report_json(const BenchReport& report, const BenchSettings& settings);
std::string ab_report_json(const AbReport& report, const BenchSettings& settings);
// Tables for terminals.
std::string bench_report_text(const BenchReport& report);
std::string ab_report_text(const AbReport& report);

}  // namespace tensoracle
