// What the load check reads from a GPU, behind an interface so the decision (load_check.h) is
// tested without one. The one implementation reads NVML (nvml_monitor.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tensoracle/bench.h"

namespace tensoracle::bench {

// One look at the GPU. A field NVML could not give stays empty (its error in `errors`).
struct GpuSample {
  std::vector<GpuProcessUse> processes;  // compute processes with a context on the GPU
  std::optional<double> utilization_percent;
  std::optional<double> sm_clock_mhz;
  std::optional<uint64_t> clock_event_reasons;  // NVML's nvmlClocksEventReason* bit mask
  std::vector<std::string> errors;
};

class GpuMonitor {
 public:
  virtual ~GpuMonitor() = default;
  virtual GpuSample sample() = 0;
  virtual std::string gpu_name() const = 0;
  virtual std::string pci_bus_id() const = 0;
  virtual std::optional<double> sm_clock_limit_mhz() const = 0;
};

// The soname of NVML as the driver installs it.
inline constexpr const char* kNvmlLibrary = "libnvidia-ml.so.1";

// Opens NVML (`library`, dlopen at run time) for the GPU at `pci_bus_id` ("0000:19:00.0", as
// cudaDeviceGetPCIBusId writes it). Errors (kUnsupported) say why NVML cannot be used: the
// library cannot be opened (dlerror's text), lacks a function, or nvmlInit / the device lookup
// fail (NVML's error string).
Result<std::unique_ptr<GpuMonitor>> open_nvml_monitor(const std::string& pci_bus_id,
                                                      const std::string& library = kNvmlLibrary);

// The lower-case names of the reasons in an nvmlClocksEventReason* mask ("sw_power_cap",
// "hw_thermal_slowdown", ...; unknown bits as "bit 0x..."), and the subset that invalidates a run
// (thermal and hardware slowdowns: the clock was pulled down by something other than the work).
std::vector<std::string> clock_event_reason_names(uint64_t mask);
uint64_t invalidating_clock_event_reasons();

}  // namespace tensoracle::bench
