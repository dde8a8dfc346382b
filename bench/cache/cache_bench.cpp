// Cache costs that users feel on every run:
//   BM_KeyOfUnchanged2GBCheckpoint  the cache key of a 2 GB checkpoint already hashed once
//                                   (target <= 50 ms): open the weights, content hash through the
//                                   sidecar records, canonical manifest, SHA-256.
//   BM_ReopenCached100MBEngine      a cache hit on an engine with 100 MB of weights, including the
//                                   checksum over the whole file and the validation of its
//                                   sections (engine/engine_validation.h; SHA-256 of every
//                                   constant) (target <= 100 ms).
// Files live in a temporary directory; the checkpoint is sparse, so it takes no disk space.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "host/engine/sample_engine.h"
#include "host/engine/small_cpu_engine.h"
#include "tensoracle/cache.h"

namespace tensoracle {
namespace {

std::string make_temp_dir() {
  char pattern[] = "/tmp/tensoracle-cache-bench-XXXXXX";
  const char* made = ::mkdtemp(pattern);
  return made == nullptr ? std::string() : std::string(made);
}

// A safetensors file of `tensors` fp32 tensors of `tensor_bytes` each, all zeros, sparse on disk,
// with a modification time in the past (out of the sidecar's racy window).
bool write_sparse_checkpoint(const std::string& path, int tensors, uint64_t tensor_bytes) {
  std::string header = "{";
  for (int i = 0; i < tensors; ++i)
    header += fmt::format("{}\"layer{}.weight\":{{\"dtype\":\"F32\",\"shape\":[{}],\"data_offsets\":[{},{}]}}",
                          i ? "," : "", i, tensor_bytes / 4, i * tensor_bytes, (i + 1) * tensor_bytes);
  header += "}";
  while (header.size() % 8 != 0) header += ' ';
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return false;
  uint8_t length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<uint8_t>(uint64_t(header.size()) >> (8 * i));
  bool ok = ::write(fd, length, 8) == 8 && ::write(fd, header.data(), header.size()) == ssize_t(header.size()) &&
            ::ftruncate(fd, off_t(8 + header.size() + tensors * tensor_bytes)) == 0;
  ::close(fd);
  const timespec past[2] = {{1700000000, 0}, {1700000000, 0}};
  return ok && ::utimensat(AT_FDCWD, path.c_str(), past, 0) == 0;
}

void BM_KeyOfUnchanged2GBCheckpoint(benchmark::State& state) {
  const std::string dir = make_temp_dir();
  const std::string checkpoint = dir + "/model.safetensors";
  constexpr int kTensors = 256;
  constexpr uint64_t kTensorBytes = uint64_t{8} << 20;  // 256 x 8 MiB = 2 GiB
  if (!write_sparse_checkpoint(checkpoint, kTensors, kTensorBytes)) {
    state.SkipWithError("cannot write the checkpoint");
    return;
  }
  std::vector<std::string> used;
  for (int i = 0; i < kTensors; ++i) used.push_back(fmt::format("layer{}.weight", i));
  KeyManifest manifest;
  manifest.engine_name = "big";
  manifest.environment = testing::sample_environment();
  FileHashCache sidecar(dir + "/file-hashes");
  {  // The first run hashes all 2 GiB and records the result.
    auto weights = Weights::open(checkpoint);
    if (!weights.is_ok() || !weights_content_hash(*weights, used, &sidecar).is_ok()) {
      state.SkipWithError("cannot hash the checkpoint");
      return;
    }
  }
  for (auto _ : state) {
    auto weights = Weights::open(checkpoint);
    auto hash = weights_content_hash(*weights, used, &sidecar);
    manifest.weights_hash = *hash;
    benchmark::DoNotOptimize(cache_key(manifest));
  }
  state.counters["sidecar_hits"] = sidecar.hits();
  state.counters["sidecar_misses"] = sidecar.misses();
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_KeyOfUnchanged2GBCheckpoint)->Unit(benchmark::kMillisecond)->MinTime(1.0);

void BM_ReopenCached100MBEngine(benchmark::State& state) {
  const std::string dir = make_temp_dir();
  CacheOptions options;
  options.directory = dir;
  options.max_size_bytes = 0;
  const CacheStore store(options);
  KeyManifest manifest;
  manifest.engine_name = "hundred_megabytes";
  manifest.environment = testing::sample_environment();
  const auto build = []() -> Result<EngineWriter> { return testing::small_cpu_engine_writer(100u << 20); };
  if (!store.open_or_build(manifest, CachePolicy::kReuse, build).is_ok()) {
    state.SkipWithError("cannot build the engine");
    return;
  }
  for (auto _ : state) {
    auto opened = store.open_or_build(manifest, CachePolicy::kRequireCached, build);
    if (!opened.is_ok() || !opened->cache_hit) state.SkipWithError("not a cache hit");
    benchmark::DoNotOptimize(opened->engine.plan().data);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(100u << 20));
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_ReopenCached100MBEngine)->Unit(benchmark::kMillisecond)->MinTime(1.0);

}  // namespace
}  // namespace tensoracle

BENCHMARK_MAIN();
