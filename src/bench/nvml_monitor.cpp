// NVML opened with dlopen at run time: a build needs only nvml.h (PyPI nvidia-nvml-dev), and a
// machine without the driver builds, runs and reports "NVML unavailable: <why>".
#include <dlfcn.h>
#include <fmt/format.h>
#include <nvml.h>

#include <array>

#include "bench/gpu_monitor.h"
#include "core/errors.h"

namespace tensoracle::bench {

namespace {

// The functions used, typed from the header's own declarations.
struct NvmlApi {
  decltype(&nvmlInit_v2) init = nullptr;
  decltype(&nvmlShutdown) shutdown = nullptr;
  decltype(&nvmlErrorString) error_string = nullptr;
  decltype(&nvmlDeviceGetHandleByPciBusId_v2) device_by_pci_bus_id = nullptr;
  decltype(&nvmlDeviceGetName) device_name = nullptr;
  decltype(&nvmlDeviceGetComputeRunningProcesses_v3) compute_processes = nullptr;
  decltype(&nvmlDeviceGetUtilizationRates) utilization = nullptr;
  decltype(&nvmlDeviceGetClockInfo) clock = nullptr;
  decltype(&nvmlDeviceGetMaxClockInfo) max_clock = nullptr;
  decltype(&nvmlDeviceGetCurrentClocksEventReasons) clock_event_reasons = nullptr;
};

template <typename Fn>
Status resolve(void* library, const char* name, Fn& fn, const std::string& soname) {
  fn = reinterpret_cast<Fn>(dlsym(library, name));
  if (!fn) return unsupported("{} has no function {}", soname, name);
  return Status::ok();
}

class NvmlMonitor : public GpuMonitor {
 public:
  NvmlMonitor(NvmlApi api, nvmlDevice_t device, std::string name, std::string bus_id, std::optional<double> limit)
      : api_(api), device_(device), name_(std::move(name)), bus_id_(std::move(bus_id)), limit_(limit) {}
  ~NvmlMonitor() override { api_.shutdown(); }

  GpuSample sample() override {
    GpuSample s;
    const auto failed = [&](const char* what, nvmlReturn_t r) {
      s.errors.push_back(fmt::format("{}: {}", what, api_.error_string(r)));
    };
    std::array<nvmlProcessInfo_t, 64> infos{};
    unsigned count = static_cast<unsigned>(infos.size());
    if (nvmlReturn_t r = api_.compute_processes(device_, &count, infos.data()); r == NVML_SUCCESS) {
      for (unsigned i = 0; i < count; ++i) {
        const unsigned long long unknown = static_cast<unsigned long long>(NVML_VALUE_NOT_AVAILABLE);
        const uint64_t used = infos[i].usedGpuMemory == unknown ? 0 : infos[i].usedGpuMemory;
        s.processes.push_back({infos[i].pid, used});
      }
    } else {
      failed("nvmlDeviceGetComputeRunningProcesses_v3", r);
    }
    nvmlUtilization_t utilization{};
    if (nvmlReturn_t r = api_.utilization(device_, &utilization); r == NVML_SUCCESS)
      s.utilization_percent = utilization.gpu;
    else
      failed("nvmlDeviceGetUtilizationRates", r);
    unsigned mhz = 0;
    if (nvmlReturn_t r = api_.clock(device_, NVML_CLOCK_SM, &mhz); r == NVML_SUCCESS)
      s.sm_clock_mhz = mhz;
    else
      failed("nvmlDeviceGetClockInfo(SM)", r);
    unsigned long long reasons = 0;
    if (nvmlReturn_t r = api_.clock_event_reasons(device_, &reasons); r == NVML_SUCCESS)
      s.clock_event_reasons = reasons;
    else
      failed("nvmlDeviceGetCurrentClocksEventReasons", r);
    return s;
  }
  std::string gpu_name() const override { return name_; }
  std::string pci_bus_id() const override { return bus_id_; }
  std::optional<double> sm_clock_limit_mhz() const override { return limit_; }

 private:
  NvmlApi api_;
  nvmlDevice_t device_;
  std::string name_, bus_id_;
  std::optional<double> limit_;
};

}  // namespace

Result<std::unique_ptr<GpuMonitor>> open_nvml_monitor(const std::string& pci_bus_id, const std::string& library) {
  // Never closed: NVML keeps threads and state that must not outlive its code.
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!handle) {
    const char* why = dlerror();
    return unsupported("{}", why ? why : ("cannot open " + library).c_str());
  }
  NvmlApi api;
  TO_RETURN_IF_ERROR(resolve(handle, "nvmlInit_v2", api.init, library));
  TO_RETURN_IF_ERROR(resolve(handle, "nvmlShutdown", api.shutdown, library));
  TO_RETURN_IF_ERROR(resolve(handle, "nvmlErrorString", api.error_string, library));
  TO_RETURN_IF_ERROR(resolve(handle, "nvmlDeviceGetHandleByPciBusId_v2", api.device_by_pci_bus_id, library));
  TO_RETURN_IF_ERROR(resolve(handle, "nvmlDeviceGetName", api.device_name, library));
  TO_RETURN_IF_ERROR(resolve(handle, "nvmlDeviceGetComputeRunningProcesses_v3", api.compute_processes, library));
  TO_RETURN_IF_ERROR(resolve(handle, "nvmlDeviceGetUtilizationRates", api.utilization, library));
  TO_RETURN_IF_ERROR(resolve(handle, "nvmlDeviceGetClockInfo", api.clock, library));
  TO_RETURN_IF_ERROR(resolve(handle, "nvmlDeviceGetMaxClockInfo", api.max_clock, library));
  // Drivers before the rename (R535) have the same function under its old name.
  if (!resolve(handle, "nvmlDeviceGetCurrentClocksEventReasons", api.clock_event_reasons, library).is_ok())
    TO_RETURN_IF_ERROR(resolve(handle, "nvmlDeviceGetCurrentClocksThrottleReasons", api.clock_event_reasons, library));

  if (nvmlReturn_t r = api.init(); r != NVML_SUCCESS) return unsupported("nvmlInit: {}", api.error_string(r));
  nvmlDevice_t device = nullptr;
  if (nvmlReturn_t r = api.device_by_pci_bus_id(pci_bus_id.c_str(), &device); r != NVML_SUCCESS) {
    api.shutdown();
    return unsupported("no NVML device at PCI bus id '{}': {}", pci_bus_id, api.error_string(r));
  }
  std::array<char, NVML_DEVICE_NAME_V2_BUFFER_SIZE> name{};
  std::string device_name = api.device_name(device, name.data(), static_cast<unsigned>(name.size())) == NVML_SUCCESS
                                ? std::string(name.data())
                                : std::string("?");
  unsigned max_mhz = 0;
  std::optional<double> limit;
  if (api.max_clock(device, NVML_CLOCK_SM, &max_mhz) == NVML_SUCCESS) limit = max_mhz;
  return std::unique_ptr<GpuMonitor>(std::make_unique<NvmlMonitor>(api, device, device_name, pci_bus_id, limit));
}

std::vector<std::string> clock_event_reason_names(uint64_t mask) {
  static const std::pair<uint64_t, const char*> kNames[] = {
      {nvmlClocksEventReasonGpuIdle, "gpu_idle"},
      {nvmlClocksEventReasonApplicationsClocksSetting, "applications_clocks_setting"},
      {nvmlClocksEventReasonSwPowerCap, "sw_power_cap"},
      {nvmlClocksThrottleReasonHwSlowdown, "hw_slowdown"},
      {nvmlClocksEventReasonSyncBoost, "sync_boost"},
      {nvmlClocksEventReasonSwThermalSlowdown, "sw_thermal_slowdown"},
      {nvmlClocksThrottleReasonHwThermalSlowdown, "hw_thermal_slowdown"},
      {nvmlClocksThrottleReasonHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
      {nvmlClocksEventReasonDisplayClockSetting, "display_clock_setting"},
  };
  std::vector<std::string> names;
  uint64_t known = 0;
  for (const auto& [bit, name] : kNames) {
    known |= bit;
    if (mask & bit) names.emplace_back(name);
  }
  for (int b = 0; b < 64; ++b) {
    const uint64_t bit = uint64_t{1} << b;
    if ((mask & bit) && !(known & bit)) names.push_back(fmt::format("bit 0x{:x}", bit));
  }
  return names;
}

uint64_t invalidating_clock_event_reasons() {
  return nvmlClocksThrottleReasonHwSlowdown | nvmlClocksEventReasonSwThermalSlowdown |
         nvmlClocksThrottleReasonHwThermalSlowdown | nvmlClocksThrottleReasonHwPowerBrakeSlowdown;
}

}  // namespace tensoracle::bench
