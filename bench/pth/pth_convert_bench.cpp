// Converting a 1 GiB torch.save-layout checkpoint vs copying the same file, in one run.
//
// The checkpoint (64 contiguous tensors of 16 MiB, fp32 and bf16, stored uncompressed as torch
// does) is written once into a temporary directory and removed at exit. Both the copy and the
// conversion read it from the page cache, write a new file and fsync it (the converter's atomic
// writer does; an fsync-free copy is measured too); removing the output between runs is not
// timed. TENSORACLE_PTH_BENCH_MIB overrides the size.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>
#include <zip.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tensoracle/pth.h"

namespace {

namespace fs = std::filesystem;

constexpr size_t kTensorBytes = size_t{16} << 20;

std::string le32(uint32_t v) { return std::string{char(v), char(v >> 8), char(v >> 16), char(v >> 24)}; }
std::string pickled_str(const std::string& s) { return "X" + le32(static_cast<uint32_t>(s.size())) + s; }
std::string pickled_int(uint32_t v) { return "J" + le32(v); }

// {"layer<i>.weight": tensor, ...} in protocol 2, the way torch.save spells a state dict.
std::string state_dict_pickle(size_t tensors) {
  std::string p = "\x80\x02}(";
  for (size_t i = 0; i < tensors; ++i) {
    const bool bf16 = i % 4 == 3;
    const uint32_t numel = static_cast<uint32_t>(kTensorBytes / (bf16 ? 2 : 4));
    p += pickled_str("layer" + std::to_string(i) + ".weight");
    p += "ctorch._utils\n_rebuild_tensor_v2\n(";
    p += std::string("(") + pickled_str("storage") + (bf16 ? "ctorch\nBFloat16Storage\n" : "ctorch\nFloatStorage\n") +
         pickled_str(std::to_string(i)) + pickled_str("cpu") + pickled_int(numel) + "tQ";
    p += pickled_int(0) + "(" + pickled_int(numel / 1024) + pickled_int(1024) + "t(" + pickled_int(1024) +
         pickled_int(1) + "t" + "\x89" + "ccollections\nOrderedDict\n)R" + "tR";
  }
  return p + "u.";
}

struct Checkpoint {
  fs::path dir;
  std::string path;
  uint64_t bytes = 0;

  Checkpoint() {
    const char* mib = std::getenv("TENSORACLE_PTH_BENCH_MIB");
    const size_t tensors = std::max<size_t>(1, (mib ? std::strtoull(mib, nullptr, 10) : 1024) / 16);
    std::string pattern = (fs::temp_directory_path() / "pth_bench_XXXXXX").string();
    if (!::mkdtemp(pattern.data())) std::abort();
    dir = pattern;
    path = (dir / "checkpoint.pth").string();
    // One pseudo-random buffer backs every record (libzip reads it at close), so generating the
    // file needs 16 MiB of memory, not 1 GiB.
    std::vector<uint8_t> data(kTensorBytes);
    uint64_t state = 0x9E3779B97F4A7C15ull;
    for (uint8_t& b : data) b = static_cast<uint8_t>((state = state * 6364136223846793005ull + 1442695040888963407ull) >> 56);
    const std::string pickle = state_dict_pickle(tensors);
    int error = 0;
    zip_t* zip = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
    auto add = [&](const std::string& name, const void* contents, size_t size) {
      const zip_int64_t index = zip_file_add(zip, name.c_str(), zip_source_buffer(zip, contents, size, 0), 0);
      zip_set_file_compression(zip, static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0);
    };
    add("archive/data.pkl", pickle.data(), pickle.size());
    add("archive/byteorder", "little", 6);
    for (size_t i = 0; i < tensors; ++i) add("archive/data/" + std::to_string(i), data.data(), data.size());
    if (!zip || zip_close(zip) != 0) std::abort();
    bytes = fs::file_size(path);
  }
  ~Checkpoint() { fs::remove_all(dir); }
};

const Checkpoint& checkpoint() {
  static const Checkpoint instance;
  return instance;
}

void copy_file(const std::string& from, const std::string& to, bool sync) {
  const int in = ::open(from.c_str(), O_RDONLY);
  const int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char> buffer(size_t{1} << 20);
  ssize_t got;
  while ((got = ::read(in, buffer.data(), buffer.size())) > 0)
    if (::write(out, buffer.data(), static_cast<size_t>(got)) != got) std::abort();
  if (sync) ::fsync(out);
  ::close(in);
  ::close(out);
}

void BM_CopyFile(benchmark::State& state) {
  const Checkpoint& c = checkpoint();
  const std::string out = (c.dir / "copy.bin").string();
  for (auto _ : state) {
    copy_file(c.path, out, state.range(0) != 0);
    state.PauseTiming();
    fs::remove(out);  // each run writes a new file, as a conversion does
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c.bytes));
}
BENCHMARK(BM_CopyFile)->ArgName("fsync")->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

void BM_ConvertPth(benchmark::State& state) {
  const Checkpoint& c = checkpoint();
  const std::string out = (c.dir / "out.safetensors").string();
  for (auto _ : state) {
    auto result = tensoracle::convert_pth_to_safetensors(c.path, out);
    if (!result.is_ok()) state.SkipWithError(result.status().to_string().c_str());
    state.PauseTiming();
    fs::remove(out);  // freeing the previous output's blocks is not part of converting
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * c.bytes));
}
BENCHMARK(BM_ConvertPth)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
