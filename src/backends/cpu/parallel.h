// Splitting loops over the machine's cores (std::thread; no pool, as layers are coarse).
#pragma once

#include <cstdint>
#include <functional>

namespace tensoracle::backends::cpu {

// Calls fn(begin, end) on disjoint chunks covering [0, n), in parallel when n / grain > 1.
// fn must not throw.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

int num_threads();

}  // namespace tensoracle::backends::cpu
