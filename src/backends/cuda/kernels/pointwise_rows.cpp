#include "backends/cuda/kernels/pointwise_rows.h"

#include "core/errors.h"

namespace tensoracle::backends::cuda {

namespace {

constexpr int64_t kWarpRowLimit = 1024;  // 32 lanes x 32 cached values
constexpr int kMaxBlockCache = 16;

int block_threads_for(int64_t size) {
  // About 8 values per thread keeps enough loads in flight without spilling registers.
  int threads = 128;
  while (threads < 1024 && static_cast<int64_t>(threads) * 8 < size) threads *= 2;
  return threads;
}

// The smallest power of two >= ceil(size / threads), at least `floor`; 0 beyond `limit`.
int cache_per_thread(int64_t size, int threads, int floor, int limit) {
  const int64_t need = (size + threads - 1) / threads;
  int per = floor;
  while (per < need && per < limit) per *= 2;
  return per >= need ? per : 0;
}

}  // namespace

std::vector<std::string> row_variants(int64_t size) {
  std::vector<std::string> out;
  if (size <= kWarpRowLimit) out.push_back("warp");
  const int best = block_threads_for(size);
  out.push_back("block" + std::to_string(best));
  for (int t : {128, 256, 512, 1024})
    if (t != best) out.push_back("block" + std::to_string(t));
  return out;
}

Result<RowLaunch> row_launch(int64_t size, const std::string& variant) {
  RowLaunch launch;
  if (variant == "warp") {
    if (size > kWarpRowLimit) return invalid_argument("row variant 'warp' takes rows of at most {}, not {}", kWarpRowLimit, size);
    launch.warp = true;
    launch.threads = 128;
    launch.per_thread = cache_per_thread(size, 32, 1, 32);
    return launch;
  }
  for (int t : {128, 256, 512, 1024}) {
    if (variant != "block" + std::to_string(t)) continue;
    launch.warp = false;
    launch.threads = t;
    launch.per_thread = cache_per_thread(size, t, 4, kMaxBlockCache);
    return launch;
  }
  return invalid_argument("unknown row variant '{}'", variant);
}

}  // namespace tensoracle::backends::cuda
