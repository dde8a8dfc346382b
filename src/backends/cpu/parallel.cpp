#include "backends/cpu/parallel.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace tensoracle::backends::cpu {

int num_threads() {
  static const int n = std::max(1u, std::thread::hardware_concurrency());
  return n;
}

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const int64_t chunks = std::min<int64_t>(num_threads(), std::max<int64_t>(1, n / std::max<int64_t>(1, grain)));
  if (chunks <= 1) {
    fn(0, n);
    return;
  }
  std::vector<std::thread> threads;
  const int64_t step = (n + chunks - 1) / chunks;
  for (int64_t c = 1; c < chunks; ++c) {
    const int64_t begin = c * step, end = std::min(n, begin + step);
    if (begin < end) threads.emplace_back(fn, begin, end);
  }
  fn(0, std::min(n, step));
  for (auto& t : threads) t.join();
}

}  // namespace tensoracle::backends::cpu
