#include "bench/host_load.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "core/errors.h"

namespace tensoracle::bench {

Result<HostCpuTicks> read_host_cpu_ticks() {
  HostCpuTicks t;
  std::ifstream stat("/proc/stat");
  // The first line sums every CPU: "cpu  user nice system idle iowait irq softirq steal ...".
  constexpr std::string_view kAllCpus = "cpu";
  std::string label;
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (!(stat >> label >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) || label != kAllCpus)
    return unsupported("cannot read the CPU time of the host from /proc/stat");
  t.busy = user + nice + system + irq + softirq + steal;
  t.total = t.busy + idle + iowait;
  // /proc/self/stat: the command (field 2) may hold spaces; utime and stime are fields 14 and 15.
  std::ifstream self("/proc/self/stat");
  std::string line;
  std::getline(self, line);
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return unsupported("cannot read this process's CPU time from /proc/self/stat");
  std::istringstream fields(line.substr(close + 2));
  std::string skip;
  for (int field = 3; field < 14; ++field) fields >> skip;
  uint64_t utime = 0, stime = 0;
  if (!(fields >> utime >> stime)) return unsupported("cannot read this process's CPU time from /proc/self/stat");
  t.own = utime + stime;
  return t;
}

LoadCheck evaluate_host_load(const HostCpuTicks& before, const HostCpuTicks& after, double max_other_percent) {
  LoadCheck check;
  check.status = "host";
  const double total = static_cast<double>(after.total - before.total);
  const double busy = static_cast<double>(after.busy - before.busy);
  const double own = static_cast<double>(after.own - before.own);
  const double other = std::max(0.0, busy - own);
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  check.reason = "the engine runs on the host: other processes' CPU time during the run is checked (/proc/stat)";
  if (total <= 0) {
    check.notes.push_back("the run was shorter than one clock tick: nothing to judge");
    check.isolated = true;
    return check;
  }
  check.host_other_cpu_percent = 100 * other / total;
  check.host_own_cpu_percent = 100 * own / total;
  if (*check.host_other_cpu_percent > max_other_percent)
    check.invalid_reasons.push_back(fmt::format(
        "other processes used {:.0f}% of the host's CPU time during the run ({:.2g} of its {} hardware threads; threshold "
        "{:g}%): the timing is not of this engine alone",
        *check.host_other_cpu_percent, *check.host_other_cpu_percent / 100 * threads, threads, max_other_percent));
  check.isolated = check.invalid_reasons.empty();
  return check;
}

}  // namespace tensoracle::bench
