// The isolated-load check: NVML's loader where the library is absent (every machine without a
// driver, CI included), and the verdict on what a GPU monitor saw (a fake monitor, so every case
// runs without a GPU).
#include <gtest/gtest.h>
#include <unistd.h>

#include "bench/gpu_monitor.h"
#include "bench/host_load.h"
#include "bench/load_check.h"

namespace tensoracle::bench {
namespace {

TEST(NvmlLoader, AnAbsentLibraryIsReportedNotFatal) {
  auto monitor = open_nvml_monitor("0000:00:00.0", "libtensoracle-no-such-nvml.so.1");
  ASSERT_FALSE(monitor.is_ok());
  EXPECT_EQ(monitor.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(monitor.status().message().find("libtensoracle-no-such-nvml.so.1"), std::string::npos)
      << monitor.status().message();
}

TEST(NvmlLoader, ALibraryWithoutNvmlNamesTheMissingFunction) {
  auto monitor = open_nvml_monitor("0000:00:00.0", "libm.so.6");
  ASSERT_FALSE(monitor.is_ok());
  EXPECT_NE(monitor.status().message().find("nvmlInit_v2"), std::string::npos) << monitor.status().message();
}

TEST(NvmlLoader, TheDriversLibraryEitherOpensOrSaysWhy) {
  // Here (no driver) the error is dlopen's; on a GPU machine a bogus bus id is NVML's complaint.
  auto monitor = open_nvml_monitor("0000:ff:1f.7");
  ASSERT_FALSE(monitor.is_ok());
  EXPECT_FALSE(monitor.status().message().empty());
}

class FakeMonitor : public GpuMonitor {
 public:
  GpuSample sample() override { return {}; }
  std::string gpu_name() const override { return "Fake GPU"; }
  std::string pci_bus_id() const override { return "0000:01:00.0"; }
  std::optional<double> sm_clock_limit_mhz() const override { return 1980.0; }
};

constexpr uint32_t kOwnPid = 4242;
constexpr uint64_t kSwPowerCap = 0x4, kHwThermal = 0x40, kGpuIdle = 0x1;

GpuSample sample(std::vector<uint32_t> pids, double utilization, double clock = 1980, uint64_t reasons = 0) {
  GpuSample s;
  for (uint32_t p : pids) s.processes.push_back({p, 512ull << 20});
  s.utilization_percent = utilization;
  s.sm_clock_mhz = clock;
  s.clock_event_reasons = reasons;
  return s;
}

LoadCheck verdict(const std::vector<GpuSample>& before, const std::vector<GpuSample>& during) {
  FakeMonitor monitor;
  return evaluate_load(monitor, before, during, kOwnPid, LoadThresholds{});
}

TEST(LoadCheck, AQuietGpuWithOnlyThisProcessIsIsolated) {
  const LoadCheck c = verdict({sample({kOwnPid}, 0), sample({kOwnPid}, 0)}, {sample({kOwnPid}, 97, 1830, kGpuIdle)});
  EXPECT_TRUE(c.isolated);
  EXPECT_TRUE(c.invalid_reasons.empty());
  EXPECT_TRUE(c.own_process_listed);
  EXPECT_EQ(c.utilization_before_percent, 0.0);
  EXPECT_EQ(c.utilization_during_max_percent, 97.0);
  EXPECT_EQ(c.sm_clock_min_mhz, 1830.0);
  EXPECT_EQ(c.gpu_name, "Fake GPU");
}

TEST(LoadCheck, AnotherComputeProcessMakesTheRunInvalidAndIsNamed) {
  const LoadCheck c = verdict({sample({kOwnPid}, 0)}, {sample({kOwnPid, 777}, 100)});
  EXPECT_FALSE(c.isolated);
  ASSERT_EQ(c.invalid_reasons.size(), 1u);
  EXPECT_NE(c.invalid_reasons[0].find("pid 777"), std::string::npos) << c.invalid_reasons[0];
  ASSERT_EQ(c.other_processes.size(), 1u);
  EXPECT_EQ(c.other_processes[0].pid, 777u);
}

TEST(LoadCheck, InAnotherPidNamespaceTwoProcessesMeanAnother) {
  const LoadCheck two = verdict({sample({11, 12}, 0)}, {});
  EXPECT_FALSE(two.isolated);
  EXPECT_NE(two.invalid_reasons.at(0).find("pid namespace"), std::string::npos) << two.invalid_reasons.at(0);
  const LoadCheck one = verdict({sample({11}, 0)}, {sample({11}, 90)});
  EXPECT_TRUE(one.isolated);
  ASSERT_FALSE(one.notes.empty());
  EXPECT_NE(one.notes[0].find("taken to be this process"), std::string::npos);
}

TEST(LoadCheck, UtilizationBeforeTheRunCountsItsQuietestSample) {
  // This process's own upload right before shows in the first sample only: not load.
  EXPECT_TRUE(verdict({sample({kOwnPid}, 60), sample({kOwnPid}, 0), sample({kOwnPid}, 2)}, {}).isolated);
  const LoadCheck busy = verdict({sample({kOwnPid}, 98), sample({kOwnPid}, 95)}, {});
  EXPECT_FALSE(busy.isolated);
  EXPECT_NE(busy.invalid_reasons.at(0).find("95%"), std::string::npos) << busy.invalid_reasons.at(0);
}

TEST(LoadCheck, ThermalSlowdownIsInvalidAPowerCapIsANote) {
  const LoadCheck thermal = verdict({sample({kOwnPid}, 0)}, {sample({kOwnPid}, 99, 1200, kHwThermal)});
  EXPECT_FALSE(thermal.isolated);
  EXPECT_NE(thermal.invalid_reasons.at(0).find("hw_thermal_slowdown"), std::string::npos);
  const LoadCheck capped = verdict({sample({kOwnPid}, 0)}, {sample({kOwnPid}, 99, 1700, kSwPowerCap)});
  EXPECT_TRUE(capped.isolated);
  EXPECT_EQ(capped.clock_event_reasons, std::vector<std::string>{"sw_power_cap"});
  ASSERT_FALSE(capped.notes.empty());
  EXPECT_NE(capped.notes[0].find("sw_power_cap"), std::string::npos);
}

TEST(LoadCheck, ReasonNamesCoverUnknownBits) {
  EXPECT_EQ(clock_event_reason_names(0), std::vector<std::string>{});
  const std::vector<std::string> names = clock_event_reason_names(kGpuIdle | (uint64_t{1} << 40));
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0], "gpu_idle");
  EXPECT_EQ(names[1], "bit 0x10000000000");
}

TEST(LoadCheck, TheRecorderSamplesBeforeAndDuring) {
  class Counting : public FakeMonitor {
   public:
    GpuSample sample() override { return bench::sample({static_cast<uint32_t>(getpid())}, 0); }
  };
  auto recorder = LoadRecorder::start(std::make_unique<Counting>(), LoadThresholds{}, 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(350));
  const LoadCheck c = recorder->finish();
  EXPECT_EQ(c.samples_before, 2);
  EXPECT_GE(c.samples_during, 2);
  EXPECT_TRUE(c.isolated);
  EXPECT_TRUE(c.own_process_listed);
}

TEST(HostLoad, OtherProcessesCpuTimeAboveTheThresholdIsInvalid) {
  const HostCpuTicks before{1000, 400, 100};
  // 1000 ticks pass; 600 busy of which 300 are this process's: others took 30%.
  const LoadCheck loaded = evaluate_host_load(before, {2000, 1000, 400}, 10.0);
  EXPECT_EQ(loaded.status, "host");
  EXPECT_DOUBLE_EQ(*loaded.host_other_cpu_percent, 30.0);
  EXPECT_DOUBLE_EQ(*loaded.host_own_cpu_percent, 30.0);
  EXPECT_FALSE(loaded.isolated);
  EXPECT_NE(loaded.invalid_reasons.at(0).find("other processes used 30%"), std::string::npos) << loaded.invalid_reasons.at(0);
  // Only this process was busy (plus 2% of noise): isolated.
  const LoadCheck quiet = evaluate_host_load(before, {2000, 920, 600}, 10.0);
  EXPECT_TRUE(quiet.isolated);
  EXPECT_DOUBLE_EQ(*quiet.host_other_cpu_percent, 2.0);
}

TEST(HostLoad, TicksOfThisMachineAreReadable) {
  auto a = read_host_cpu_ticks();
  ASSERT_TRUE(a.is_ok()) << a.status().to_string();
  volatile double sink = 0;
  for (int i = 0; i < 20000000; ++i) sink = sink + i * 0.5;  // burn some CPU time
  auto b = read_host_cpu_ticks();
  ASSERT_TRUE(b.is_ok());
  EXPECT_GE(b->total, a->total);
  EXPECT_GE(b->own, a->own);
  EXPECT_LE(b->busy, b->total);
}

}  // namespace
}  // namespace tensoracle::bench
