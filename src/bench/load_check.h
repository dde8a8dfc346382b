// The isolated-load check (bench.h): samples of the GPU before and during a timed run, and the
// verdict on them.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "bench/gpu_monitor.h"

namespace tensoracle::bench {

struct LoadThresholds {
  double max_utilization_before_percent = 10.0;
};

// The verdict on samples taken before and during a run by the process `own_pid`:
// - another compute process in any sample (a pid other than `own_pid`; when NVML never lists
//   `own_pid` — another pid namespace — a sample with two or more processes) is invalid;
// - utilization before the run above the threshold is invalid; "before" is the smallest of the
//   samples before, so this process's own work just before (uploads, a build) does not count;
// - a thermal or hardware slowdown reason during the run is invalid; other reasons (a power cap)
//   are notes.
LoadCheck evaluate_load(const GpuMonitor& monitor, const std::vector<GpuSample>& before,
                        const std::vector<GpuSample>& during, uint32_t own_pid, const LoadThresholds& thresholds);

// Takes the samples: `before_samples` 100 ms apart when started, then one every 100 ms on a
// thread of its own until finish().
class LoadRecorder {
 public:
  static std::unique_ptr<LoadRecorder> start(std::unique_ptr<GpuMonitor> monitor, const LoadThresholds& thresholds,
                                             int before_samples = 5);
  ~LoadRecorder();
  LoadCheck finish();

 private:
  LoadRecorder(std::unique_ptr<GpuMonitor> monitor, const LoadThresholds& thresholds);
  void sample_until_stopped();

  std::unique_ptr<GpuMonitor> monitor_;
  LoadThresholds thresholds_;
  std::vector<GpuSample> before_;
  std::vector<GpuSample> during_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;  // guarded by mutex_
  std::thread thread_;
};

}  // namespace tensoracle::bench
