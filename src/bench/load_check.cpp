#include "bench/load_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <unistd.h>

namespace tensoracle::bench {

namespace {

constexpr std::chrono::milliseconds kSamplePeriod{100};

std::string process_list(const std::vector<GpuProcessUse>& processes) {
  std::string out;
  for (const GpuProcessUse& p : processes) {
    if (!out.empty()) out += ", ";
    out += p.used_memory_bytes ? fmt::format("pid {} ({} MiB)", p.pid, p.used_memory_bytes >> 20) : fmt::format("pid {}", p.pid);
  }
  return out;
}

}  // namespace

LoadCheck evaluate_load(const GpuMonitor& monitor, const std::vector<GpuSample>& before,
                        const std::vector<GpuSample>& during, uint32_t own_pid, const LoadThresholds& thresholds) {
  LoadCheck check;
  check.status = "nvml";
  check.gpu_name = monitor.gpu_name();
  check.pci_bus_id = monitor.pci_bus_id();
  check.sm_clock_limit_mhz = monitor.sm_clock_limit_mhz();
  check.samples_before = static_cast<int>(before.size());
  check.samples_during = static_cast<int>(during.size());

  // Other processes, over every sample.
  std::set<uint32_t> seen;
  size_t most_listed = 0;
  std::set<std::string> errors;
  for (const auto* samples : {&before, &during})
    for (const GpuSample& s : *samples) {
      most_listed = std::max(most_listed, s.processes.size());
      for (const std::string& e : s.errors) errors.insert(e);
      for (const GpuProcessUse& p : s.processes) {
        if (p.pid == own_pid) {
          check.own_process_listed = true;
        } else if (seen.insert(p.pid).second) {
          check.other_processes.push_back(p);
        }
      }
    }
  if (check.own_process_listed && !check.other_processes.empty()) {
    check.invalid_reasons.push_back(fmt::format("{} other compute process{} on the GPU: {}", check.other_processes.size(),
                                                check.other_processes.size() == 1 ? "" : "es",
                                                process_list(check.other_processes)));
  } else if (!check.own_process_listed && most_listed >= 2) {
    check.invalid_reasons.push_back(
        fmt::format("{} compute processes on the GPU at once ({}); this process (pid {}) is not among NVML's pids "
                    "(another pid namespace), so at least {} of them are others",
                    most_listed, process_list(check.other_processes), own_pid, most_listed - 1));
  } else if (!check.own_process_listed && most_listed == 1) {
    check.notes.push_back(fmt::format("NVML lists one compute process ({}), not this process's pid {} (another pid "
                                      "namespace): taken to be this process",
                                      process_list(check.other_processes), own_pid));
    check.other_processes.clear();
  }

  // Utilization before: the quietest sample, so this process's own work just before is not counted.
  for (const GpuSample& s : before)
    if (s.utilization_percent)
      check.utilization_before_percent = std::min(check.utilization_before_percent.value_or(100.0), *s.utilization_percent);
  if (check.utilization_before_percent && *check.utilization_before_percent > thresholds.max_utilization_before_percent)
    check.invalid_reasons.push_back(fmt::format(
        "GPU utilization was {:g}% before the run in the quietest of {} samples (threshold {:g}%): something else is "
        "using the GPU",
        *check.utilization_before_percent, before.size(), thresholds.max_utilization_before_percent));

  // During: utilization (this run's own work included), SM clock, clock-event reasons.
  double sum = 0;
  int counted = 0;
  uint64_t reasons = 0;
  for (const GpuSample& s : during) {
    if (s.utilization_percent) {
      sum += *s.utilization_percent;
      ++counted;
      check.utilization_during_max_percent = std::max(check.utilization_during_max_percent.value_or(0.0), *s.utilization_percent);
    }
    if (s.sm_clock_mhz) {
      check.sm_clock_min_mhz = std::min(check.sm_clock_min_mhz.value_or(*s.sm_clock_mhz), *s.sm_clock_mhz);
      check.sm_clock_max_mhz = std::max(check.sm_clock_max_mhz.value_or(*s.sm_clock_mhz), *s.sm_clock_mhz);
    }
    if (s.clock_event_reasons) reasons |= *s.clock_event_reasons;
  }
  if (counted) check.utilization_during_mean_percent = sum / counted;
  check.clock_event_reasons = clock_event_reason_names(reasons);
  if (const uint64_t bad = reasons & invalidating_clock_event_reasons())
    check.invalid_reasons.push_back(fmt::format("the SM clock was slowed down during the run by {}",
                                                fmt::join(clock_event_reason_names(bad), ", ")));
  const uint64_t benign = reasons & ~invalidating_clock_event_reasons();
  for (const std::string& name : clock_event_reason_names(benign))
    if (name != "gpu_idle") check.notes.push_back("clock event during the run: " + name);
  for (const std::string& e : errors) check.notes.push_back("NVML: " + e);
  if (during.empty()) check.notes.push_back("no sample during the run (it took less than one sample period)");

  check.isolated = check.invalid_reasons.empty();
  return check;
}

std::unique_ptr<LoadRecorder> LoadRecorder::start(std::unique_ptr<GpuMonitor> monitor, const LoadThresholds& thresholds,
                                                  int before_samples) {
  std::unique_ptr<LoadRecorder> recorder(new LoadRecorder(std::move(monitor), thresholds));
  for (int i = 0; i < before_samples; ++i) {
    if (i) std::this_thread::sleep_for(kSamplePeriod);
    recorder->before_.push_back(recorder->monitor_->sample());
  }
  recorder->thread_ = std::thread([r = recorder.get()] { r->sample_until_stopped(); });
  return recorder;
}

LoadRecorder::LoadRecorder(std::unique_ptr<GpuMonitor> monitor, const LoadThresholds& thresholds)
    : monitor_(std::move(monitor)), thresholds_(thresholds) {}

LoadRecorder::~LoadRecorder() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void LoadRecorder::sample_until_stopped() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, kSamplePeriod, [this] { return stop_; })) {
    lock.unlock();
    GpuSample s = monitor_->sample();
    lock.lock();
    during_.push_back(std::move(s));
  }
}

LoadCheck LoadRecorder::finish() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  return evaluate_load(*monitor_, before_, during_, static_cast<uint32_t>(getpid()), thresholds_);
}

}  // namespace tensoracle::bench
