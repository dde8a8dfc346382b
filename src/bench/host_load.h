// The load check of a run on the host (cpu engines): how much of the machine's CPU time other
// processes took while the run was timed, from /proc/stat and /proc/self/stat.
#pragma once

#include <cstdint>

#include "tensoracle/bench.h"

namespace tensoracle::bench {

// Clock ticks since boot: every CPU's (total, and busy = not idle or waiting for I/O) and this
// process's own (user + system, all threads).
struct HostCpuTicks {
  uint64_t total = 0;
  uint64_t busy = 0;
  uint64_t own = 0;
};

Result<HostCpuTicks> read_host_cpu_ticks();

// The verdict on the ticks before and after a run: other processes' busy time above
// `max_other_percent` of the machine's capacity in that interval makes it invalid.
LoadCheck evaluate_host_load(const HostCpuTicks& before, const HostCpuTicks& after, double max_other_percent);

}  // namespace tensoracle::bench
