// Opening a large sharded checkpoint: mapping every shard, parsing and validating every header and
// the index. The target (issue 2) is < 50 ms for a 10 GB checkpoint.
//
// The checkpoint is built once per run in a temporary directory as sparse files: real headers,
// data regions that are holes (ftruncate), so it costs no disk space. Shapes and names follow a
// decoder-only transformer.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tensoracle/safetensors.h"

namespace {

constexpr int kShards = 5;
constexpr uint64_t kShardDataBytes = 2ull << 30;  // 2 GiB each, 10 GiB in all
constexpr int kLayersPerShard = 334;              // 9 tensors per layer: ~3000 tensors per shard
constexpr int64_t kHidden = 1024;

struct Checkpoint {
  std::string directory;
  std::string index;
  size_t tensors = 0;

  Checkpoint() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr ? tmp : "/tmp") + "/tensoracle-bench-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    directory = pattern;
    nlohmann::json weight_map = nlohmann::json::object();
    for (int shard = 0; shard < kShards; ++shard) {
      const std::string file = fmt::format("model-{:05d}-of-{:05d}.safetensors", shard + 1, kShards);
      write_shard(directory + "/" + file, shard, file, weight_map);
    }
    index = directory + "/model.safetensors.index.json";
    std::ofstream(index) << nlohmann::json{{"metadata", {{"total_size", kShards * kShardDataBytes}}},
                                           {"weight_map", weight_map}}
                                .dump(2);
  }
  ~Checkpoint() {
    std::error_code ignored;
    std::filesystem::remove_all(directory, ignored);
  }

  // Layer tensors in bf16, sized so the shard's data region is exactly kShardDataBytes: the last
  // tensor of the shard takes up the remainder.
  void write_shard(const std::string& path, int shard, const std::string& file, nlohmann::json& weight_map) {
    static const char* kLayerTensors[] = {
        "self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight",
        "self_attn.o_proj.weight", "mlp.gate_proj.weight",    "mlp.up_proj.weight",
        "mlp.down_proj.weight",    "input_layernorm.weight",  "post_attention_layernorm.weight"};
    const uint64_t rows_per_matrix = kShardDataBytes / (kLayersPerShard * 7ull) / (kHidden * 2) - 1;
    nlohmann::json header = nlohmann::json::object();
    header["__metadata__"] = {{"format", "pt"}};
    uint64_t offset = 0;
    for (int layer = 0; layer < kLayersPerShard; ++layer) {
      for (const char* tensor : kLayerTensors) {
        const bool norm = std::string(tensor).find("norm") != std::string::npos;
        std::vector<int64_t> shape = norm ? std::vector<int64_t>{kHidden}
                                          : std::vector<int64_t>{static_cast<int64_t>(rows_per_matrix), kHidden};
        const std::string name = fmt::format("model.layers.{}.{}", shard * kLayersPerShard + layer, tensor);
        uint64_t bytes = norm ? kHidden * 2 : rows_per_matrix * kHidden * 2;
        header[name] = {{"dtype", "BF16"}, {"shape", shape}, {"data_offsets", {offset, offset + bytes}}};
        offset += bytes;
        weight_map[name] = file;
        ++tensors;
      }
    }
    const uint64_t rest_rows = (kShardDataBytes - offset) / (kHidden * 2);
    const std::string rest = fmt::format("model.extra.{}.weight", shard);
    header[rest] = {{"dtype", "BF16"},
                    {"shape", {static_cast<int64_t>(rest_rows), kHidden}},
                    {"data_offsets", {offset, offset + rest_rows * kHidden * 2}}};
    offset += rest_rows * kHidden * 2;
    weight_map[rest] = file;
    ++tensors;

    std::string text = header.dump();
    text.append((8 - (8 + text.size()) % 8) % 8, ' ');
    std::string bytes(8, '\0');
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((text.size() >> (8 * i)) & 0xFF);
    bytes += text;
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ::write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size()) ||
        ::ftruncate(fd, static_cast<off_t>(bytes.size() + offset)) != 0)
      std::abort();
    ::close(fd);
  }
};

const Checkpoint& checkpoint() {
  static const Checkpoint instance;
  return instance;
}

void BM_OpenShardedCheckpoint(benchmark::State& state) {
  const Checkpoint& model = checkpoint();
  for (auto _ : state) {
    auto weights = tensoracle::Weights::open(model.index);
    if (!weights.is_ok()) {
      state.SkipWithError(weights.status().to_string().c_str());
      return;
    }
    benchmark::DoNotOptimize(weights);
  }
  state.counters["tensors"] = static_cast<double>(model.tensors);
  state.counters["GiB"] = static_cast<double>(kShards * kShardDataBytes) / (1ull << 30);
}
BENCHMARK(BM_OpenShardedCheckpoint)->Unit(benchmark::kMillisecond)->MinTime(2.0);

void BM_OpenOneShard(benchmark::State& state) {
  const std::string shard = checkpoint().directory + fmt::format("/model-00001-of-{:05d}.safetensors", kShards);
  for (auto _ : state) {
    auto file = tensoracle::SafetensorsFile::open(shard);
    if (!file.is_ok()) {
      state.SkipWithError(file.status().to_string().c_str());
      return;
    }
    benchmark::DoNotOptimize(file);
  }
}
BENCHMARK(BM_OpenOneShard)->Unit(benchmark::kMillisecond);

void BM_ViewEveryTensor(benchmark::State& state) {
  auto weights = tensoracle::Weights::open(checkpoint().index);
  if (!weights.is_ok()) {
    state.SkipWithError(weights.status().to_string().c_str());
    return;
  }
  const std::vector<std::string> names = weights->names();
  for (auto _ : state)
    for (const auto& name : names) benchmark::DoNotOptimize(weights->view(name));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * names.size()));
}
BENCHMARK(BM_ViewEveryTensor)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
