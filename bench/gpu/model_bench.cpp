// ResNet-50 and the BERT-base encoder on the cuda backend (docs/models.md): accuracy of the fp32,
// fp16 and bf16 engines against PyTorch, and the latency of the fp16 engines at batch 1 and 32.
//
//   model_bench [--fixtures DIR] [--json FILE] [--models resnet50,bert_encoder] [--batches 1,32]
//               [--warmup 20] [--iterations 100] [--no-profile]
//
// DIR (default: $TENSORACLE_MODEL_FIXTURES; without either the program says so and exits 0) is
// scripts/gen-model-references.py's --out (weights, seeded inputs at batch 2, PyTorch fp32
// and fp64 outputs). For each model it builds the fp32, fp16 and bf16 engines for batch 2 (build
// seconds recorded), checks the fp32 engine against PyTorch fp32 (pass: relative L2 <= 1e-5) and
// reports the fp16/bf16 engines against the fp32 engine; then builds fp16 engines for each latency
// batch and times them with the timing harness (src/bench, docs/bench.md): `iterations`
// enqueues after `warmup`, each between two CUDA events without waiting in between (throughput
// mode, one enqueue per sample: the method of scripts/torch-baseline.py), on device buffers
// holding the seeded inputs scripts/torch-baseline.py also uses, with the NVML load check; and
// times each step of those engines on its own (Execution::profile_layers) to show where the time
// goes. Everything goes to the JSON file; scripts/speed-table.py turns it into the speed table.
//
// Engines are built afresh (policy rebuild) and stored in the engine cache under the package's
// graph names and declarations ("resnet50_fp16", image fixed at the batch), so `tensoracle bench
// --package ... --graph resnet50_fp16 --batch 32 --policy require-cached` times the very engine.
// Exit status: 0 when every fp32 engine passed, 1 otherwise (or on any error); CLI11's on bad usage.
#include <cuda_runtime.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "backends/cuda/device.h"
#include "bert_encoder/bert_encoder.h"
#include "resnet50/resnet50.h"
#include "tensoracle/bench.h"
#include "tensoracle/build.h"
#include "tensoracle/compare.h"
#include "tensoracle/engine.h"

namespace tensoracle::bench {
namespace {

using backends::cuda::DeviceBuffer;

using json = nlohmann::json;

constexpr double kFp32MaxRelL2 = 1e-5;
constexpr int64_t kReferenceBatch = 2;  // the batch of the PyTorch references
constexpr int64_t kBertLength = 128;

Status cuda_status(cudaError_t error, const std::string& what) {
  if (error == cudaSuccess) return Status::ok();
  return Status(StatusCode::kInternal, what + ": " + cudaGetErrorString(error));
}

// ---- the seeded latency inputs (the same formula as scripts/torch-baseline.py) ----

uint32_t hashed(uint64_t i, uint64_t seed) {
  return static_cast<uint32_t>(((i + seed * 1000003u) * 2654435761u) & 0xFFFFFFFFu);
}

HostArray hashed_image(const Dims& shape) {
  HostArray a = HostArray::zeros(DataType::kFloat32, shape).value();
  float* p = a.data_as<float>();
  for (int64_t i = 0; i < a.element_count(); ++i)
    p[i] = static_cast<float>(static_cast<double>(hashed(static_cast<uint64_t>(i), 1)) / 4294967296.0 * 2.0 - 1.0);
  return a;
}

HostArray hashed_ids(const Dims& shape, int64_t vocab) {
  HostArray a = HostArray::zeros(DataType::kInt64, shape).value();
  int64_t* p = a.data_as<int64_t>();
  for (int64_t i = 0; i < a.element_count(); ++i) p[i] = hashed(static_cast<uint64_t>(i), 2) % vocab;
  return a;
}

// 1, except 0 on the last 16 positions of every odd-numbered sequence.
HostArray padding_mask(const Dims& shape) {
  HostArray a = HostArray::zeros(DataType::kInt64, shape).value();
  int64_t* p = a.data_as<int64_t>();
  for (int64_t b = 0; b < shape[0]; ++b)
    for (int64_t t = 0; t < shape[1]; ++t) p[b * shape[1] + t] = (b % 2 == 1 && t >= shape[1] - 16) ? 0 : 1;
  return a;
}

// ---- the models ----

struct ModelSpec {
  std::string name;
  std::string output;
  // The graph with `batch` as dim 0 (-1: dynamic, as the model package defines it).
  std::function<Status(Network&, const Weights&, int64_t batch, DataType precision)> define;
  // Network inputs in order, each with its seeded latency value at `batch`.
  std::function<NamedArrays(int64_t batch)> latency_inputs;
  std::vector<std::string> input_names;
};

std::vector<ModelSpec> model_specs() {
  ModelSpec resnet{"resnet50",
                   resnet50::kOutput,
                   [](Network& net, const Weights& w, int64_t batch, DataType precision) {
                     return resnet50::define(net, w, {batch, 3, 224, 224}, precision);
                   },  // batch -1: dynamic, fixed by the declared input shape
                   [](int64_t batch) {
                     NamedArrays in;
                     in.emplace(resnet50::kInput, hashed_image({batch, 3, 224, 224}));
                     return in;
                   },
                   {resnet50::kInput}};
  ModelSpec bert{"bert_encoder",
                 bert_encoder::kOutput,
                 [](Network& net, const Weights& w, int64_t batch, DataType precision) {
                   return bert_encoder::define(net, w, batch, kBertLength, precision);
                 },
                 [](int64_t batch) {
                   NamedArrays in;
                   in.emplace(bert_encoder::kInputIds, hashed_ids({batch, kBertLength}, bert_encoder::Config{}.vocab));
                   in.emplace(bert_encoder::kAttentionMask, padding_mask({batch, kBertLength}));
                   return in;
                 },
                 {bert_encoder::kInputIds, bert_encoder::kAttentionMask}};
  return {resnet, bert};
}

// ---- device memory and engines ----

// One device buffer per tensor, at least one byte so that every binding has an address.
Result<DeviceBuffer> device_buffer_for(size_t bytes, const std::string& what) {
  return DeviceBuffer::allocate(std::max<size_t>(bytes, 1), what.c_str());
}

struct Stream {
  cudaStream_t stream = nullptr;
  Stream() { cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking); }
  ~Stream() { cudaStreamDestroy(stream); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
};

struct BuiltEngine {
  Engine engine;
  std::string bytes;  // the engine file
  double build_s = 0;
};

// The package graph's name for `precision` ("resnet50", "resnet50_fp16", ...).
std::string graph_name(const ModelSpec& spec, DataType precision) {
  return precision == DataType::kFloat32 ? spec.name : spec.name + "_" + std::string(data_type_name(precision));
}

// `auxiliary_streams` as BuilderSettings has it; `tactic_record` (an engine file) replays its
// tactic choices instead of timing. The build is declared as the model package declares its
// graph at a fixed batch, so the cache entry is the one `tensoracle bench --package` opens.
Result<BuiltEngine> build_engine(const ModelSpec& spec, const Weights& weights, int64_t batch, DataType precision,
                                 int auxiliary_streams = 1, const std::string& tactic_record = "") {
  EngineBuild build;
  build.name = graph_name(spec, precision);
  build.graph_version = "1";
  build.graph = [&spec, precision](Network& net, const Weights& w) { return spec.define(net, w, -1, precision); };
  build.weights = weights;
  for (const auto& [name, array] : spec.latency_inputs(batch)) build.add_input(name, array.shape());
  build.backend = "cuda";
  build.quiet = true;
  build.settings.auxiliary_streams = auxiliary_streams;
  if (!tactic_record.empty()) {
    build.settings.deterministic_replay = true;
    build.settings.tactic_record = tactic_record;
  }
  TO_ASSIGN_OR_RETURN(OpenedEngine opened, open_engine(build, CachePolicy::kRebuild));
  const ByteView bytes = opened.engine.file().bytes();
  return BuiltEngine{std::move(opened.engine), std::string(bytes.as_string_view()), opened.build_seconds};
}

// An execution with every tensor bound to device memory: inputs hold `inputs`.
struct BoundExecution {
  Execution exec;
  std::vector<DeviceBuffer> buffers;
  std::map<std::string, std::pair<void*, HostArray>> outputs;  // device address, host array
};

Result<BoundExecution> bind_on_device(const Engine& engine, const NamedArrays& inputs) {
  TO_ASSIGN_OR_RETURN(Execution exec, engine.create_execution());
  BoundExecution bound{std::move(exec), {}, {}};
  for (const std::string& name : engine.input_names()) {
    auto it = inputs.find(name);
    if (it == inputs.end()) return Status(StatusCode::kNotFound, "no input array for engine input '" + name + "'");
    TO_RETURN_IF_ERROR(bound.exec.set_input_shape(name, it->second.shape()));
    TO_ASSIGN_OR_RETURN(DeviceBuffer buffer, device_buffer_for(it->second.byte_size(), name));
    TO_RETURN_IF_ERROR(cuda_status(
        cudaMemcpy(buffer.data(), it->second.data(), it->second.byte_size(), cudaMemcpyHostToDevice), "copy " + name));
    TO_RETURN_IF_ERROR(bound.exec.bind(name, buffer.data()));
    bound.buffers.push_back(std::move(buffer));
  }
  for (const std::string& name : engine.output_names()) {
    TO_ASSIGN_OR_RETURN(Dims shape, bound.exec.tensor_shape(name));
    TO_ASSIGN_OR_RETURN(IoTensor io, engine.tensor(name));
    TO_ASSIGN_OR_RETURN(HostArray host, HostArray::zeros(io.dtype, shape));
    TO_ASSIGN_OR_RETURN(DeviceBuffer buffer, device_buffer_for(host.byte_size(), name));
    // 0xFF bytes are NaN in every float type: an element the engine never writes shows up.
    TO_RETURN_IF_ERROR(cuda_status(cudaMemset(buffer.data(), 0xFF, host.byte_size()), "poison " + name));
    TO_RETURN_IF_ERROR(bound.exec.bind(name, buffer.data()));
    bound.outputs.emplace(name, std::make_pair(buffer.data(), std::move(host)));
    bound.buffers.push_back(std::move(buffer));
  }
  return bound;
}

// Runs once and copies the outputs back.
Result<NamedArrays> run_once(const Engine& engine, const NamedArrays& inputs) {
  TO_ASSIGN_OR_RETURN(BoundExecution bound, bind_on_device(engine, inputs));
  Stream stream;
  TO_RETURN_IF_ERROR(bound.exec.enqueue(stream.stream));
  TO_RETURN_IF_ERROR(cuda_status(cudaStreamSynchronize(stream.stream), "cudaStreamSynchronize after enqueue"));
  NamedArrays outputs;
  for (auto& [name, out] : bound.outputs) {
    TO_RETURN_IF_ERROR(cuda_status(
        cudaMemcpy(out.second.data(), out.first, out.second.byte_size(), cudaMemcpyDeviceToHost), "copy back " + name));
    outputs.emplace(name, std::move(out.second));
  }
  return outputs;
}

struct Latency {
  BenchReport report;
  BenchSettings settings;
  const TimingStats& stats() const { return report.runs.front().stats; }
};

// Each enqueue between two CUDA events without waiting in between (throughput mode, one enqueue
// per sample): what a call adds to a busy stream, as scripts/torch-baseline.py measures PyTorch.
Result<Latency> time_enqueues(const Engine& engine, const NamedArrays& inputs, int warmup, int iterations, bool profile) {
  Latency latency;
  latency.settings.warmup = warmup;
  latency.settings.iterations = iterations;
  latency.settings.modes = {TimingMode::kThroughput};
  latency.settings.throughput_group = 1;
  latency.settings.profile_layers = profile;
  TO_ASSIGN_OR_RETURN(latency.report, bench_engine(engine, views_of(inputs), latency.settings));
  return latency;
}

// ---- reporting ----

json comparison_json(const OutputComparison& c) {
  return {{"rel_l2_error", c.rel_l2_error},
          {"max_abs_error", c.max_abs_error},
          {"cosine_similarity", c.cosine_similarity},
          {"max_abs_reference", c.max_abs_reference},
          {"candidate_non_finite", c.candidate_non_finite.total()}};
}

Result<json> compare(const HostArray& candidate, const ArrayView& reference, const std::string& label) {
  TO_ASSIGN_OR_RETURN(OutputComparison c, compare_outputs(candidate.view(), reference));
  std::printf("  %-28s rel L2 %.3e  max abs %.3e  cosine %.8f  non-finite %lld\n", label.c_str(), c.rel_l2_error,
              c.max_abs_error, c.cosine_similarity, static_cast<long long>(c.candidate_non_finite.total()));
  return comparison_json(c);
}

json profile_json(const std::vector<LayerTiming>& steps, int top) {
  json all = json::array();
  std::map<std::string, double> by_kind;
  double total = 0;
  for (const LayerTiming& s : steps) {
    all.push_back({{"layers", s.layers}, {"kind", s.kind}, {"tactic", s.tactic}, {"median_ms", s.median_ms}});
    by_kind[s.kind] += s.median_ms;
    total += s.median_ms;
  }
  std::vector<const LayerTiming*> sorted;
  for (const LayerTiming& s : steps) sorted.push_back(&s);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->median_ms > b->median_ms; });
  std::printf("    steps timed alone: %zu, sum %.3f ms; by kind:", steps.size(), total);
  for (const auto& [kind, ms] : by_kind) std::printf(" %s %.3f", kind.c_str(), ms);
  std::printf("\n");
  for (int i = 0; i < top && i < static_cast<int>(sorted.size()); ++i)
    std::printf("    %8.4f ms  %-14s %-28s %s\n", sorted[i]->median_ms, sorted[i]->kind.c_str(),
                sorted[i]->tactic.c_str(), sorted[i]->layers.substr(0, 80).c_str());
  return {{"steps", all}, {"sum_ms", total}, {"by_kind_ms", by_kind}};
}

struct Options {
  std::string fixtures;
  std::string json_path = "model_bench.json";
  std::vector<std::string> models = {"resnet50", "bert_encoder"};
  std::vector<int64_t> batches = {1, 32};
  int warmup = 20;
  int iterations = 100;
  bool profile = true;
};

// Accuracy at batch 2 and latency at each batch for one model; records into `out`. Returns
// whether the fp32 engine passed.
bool bench_model(const ModelSpec& spec, const Options& options, json& out) {
  const std::string dir = options.fixtures + "/" + spec.name;
  std::printf("== %s\n", spec.name.c_str());
  auto fail = [&](const std::string& where, const Status& s) {
    std::printf("  %s failed: %s\n", where.c_str(), s.to_string().c_str());
    out["errors"].push_back(where + ": " + s.to_string());
    return false;
  };
  auto weights = Weights::open(dir + "/weights.safetensors");
  if (!weights.is_ok()) return fail("weights", weights.status());
  auto io = Weights::open(dir + "/io.safetensors");
  if (!io.is_ok()) return fail("fixture", io.status());

  NamedArrays reference_inputs;
  for (const std::string& name : spec.input_names) {
    auto view = io->view(name);
    if (!view.is_ok()) return fail("fixture input", view.status());
    reference_inputs.emplace(name, HostArray::copy_of(*view).value());
  }
  auto torch_fp32 = io->view(spec.output);
  auto torch_fp64 = io->view(spec.output + "_fp64");
  if (!torch_fp32.is_ok()) return fail("fixture output", torch_fp32.status());

  bool passed = false;
  std::map<DataType, HostArray> outputs;
  for (DataType precision : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
    const std::string p(data_type_name(precision));
    auto built = build_engine(spec, *weights, kReferenceBatch, precision);
    if (!built.is_ok()) {
      fail("build " + p, built.status());
      continue;
    }
    std::printf("  built %s b%lld in %.1f s\n", p.c_str(), static_cast<long long>(kReferenceBatch), built->build_s);
    out["builds"].push_back({{"precision", p}, {"batch", kReferenceBatch}, {"build_s", built->build_s}});
    auto result = run_once(built->engine, reference_inputs);
    if (!result.is_ok()) {
      fail("run " + p, result.status());
      continue;
    }
    outputs.emplace(precision, std::move(result->at(spec.output)));
  }

  // The comparison's JSON (null when it failed), also recorded under out["accuracy"][key].
  auto record = [&](const std::string& key, const HostArray& candidate, const ArrayView& reference) -> json {
    auto c = compare(candidate, reference, key);
    if (!c.is_ok()) {
      fail("compare " + key, c.status());
      return nullptr;
    }
    out["accuracy"][key] = *c;
    return *c;
  };
  if (outputs.count(DataType::kFloat32)) {
    const HostArray& fp32 = outputs.at(DataType::kFloat32);
    json c = record("fp32_vs_torch_fp32", fp32, *torch_fp32);
    passed = !c.is_null() && c["rel_l2_error"].get<double>() <= kFp32MaxRelL2 && c["candidate_non_finite"] == 0;
    out["accuracy"]["fp32_vs_torch_fp32"]["max_rel_l2_error"] = kFp32MaxRelL2;
    std::string bar = fmt::format("rel L2 <= {:.0e} vs PyTorch fp32", kFp32MaxRelL2);
    if (torch_fp64.is_ok()) {
      json vs_fp64 = record("fp32_vs_torch_fp64", fp32, *torch_fp64);
      // The bar of gpu_models_test (docs/models.md): where PyTorch fp32 itself is further than
      // half the bar from fp64, the engine must be as close to fp64 as PyTorch fp32 is (within 10%).
      auto torch_own = compare_outputs(*torch_fp32, *torch_fp64);
      if (torch_own.is_ok() && torch_own->rel_l2_error > kFp32MaxRelL2 / 2 && !vs_fp64.is_null()) {
        out["accuracy"]["torch_fp32_vs_torch_fp64"] = comparison_json(*torch_own);
        passed = vs_fp64["rel_l2_error"].get<double>() <= 1.1 * torch_own->rel_l2_error && c["candidate_non_finite"] == 0;
        bar = fmt::format("rel L2 vs PyTorch fp64 <= 1.1 x PyTorch fp32's own {:.3g}", torch_own->rel_l2_error);
      }
    }
    out["accuracy"]["fp32_vs_torch_fp32"]["passed"] = passed;
    out["accuracy"]["fp32_vs_torch_fp32"]["bar"] = bar;
    std::printf("  fp32 engine: %s (%s)\n", passed ? "PASS" : "FAIL", bar.c_str());
    for (DataType lower : {DataType::kFloat16, DataType::kBFloat16}) {
      if (!outputs.count(lower)) continue;
      const std::string p(data_type_name(lower));
      record(p + "_vs_fp32_engine", outputs.at(lower), fp32.view());
      record(p + "_vs_torch_fp32", outputs.at(lower), *torch_fp32);
    }
  }

  for (int64_t batch : options.batches) {
    auto built = build_engine(spec, *weights, batch, DataType::kFloat16);
    if (!built.is_ok()) {
      fail("build fp16 b" + std::to_string(batch), built.status());
      continue;
    }
    std::printf("  built fp16 b%lld in %.1f s\n", static_cast<long long>(batch), built->build_s);
    auto latency =
        time_enqueues(built->engine, spec.latency_inputs(batch), options.warmup, options.iterations, options.profile);
    if (!latency.is_ok()) {
      fail("latency fp16 b" + std::to_string(batch), latency.status());
      continue;
    }
    const TimingStats& stats = latency->stats();
    std::printf("  fp16 b%-3lld median %8.3f ms  p90 %8.3f ms  min %8.3f ms (%lld enqueues, %s)%s\n",
                static_cast<long long>(batch), stats.median_ms, stats.p90_ms, stats.min_ms,
                static_cast<long long>(stats.count), latency->report.runs.front().execution.c_str(),
                latency->report.valid ? "" : "  INVALID: load present");
    for (const std::string& reason : latency->report.load.invalid_reasons) std::printf("    invalid: %s\n", reason.c_str());
    json entry = {{"precision", "fp16"},
                  {"batch", batch},
                  {"median_ms", stats.median_ms},
                  {"p90_ms", stats.p90_ms},
                  {"min_ms", stats.min_ms},
                  {"mean_ms", stats.mean_ms},
                  {"iterations", stats.count},
                  {"warmup", options.warmup},
                  {"build_s", built->build_s},
                  {"graph", graph_name(spec, DataType::kFloat16)},
                  {"valid", latency->report.valid},
                  {"timing", json::parse(bench_report_json(latency->report, latency->settings))}};
    if (options.profile) entry["profile"] = profile_json(latency->report.layers, 10);
    // The same tactics on one stream, timed in the same run: what the auxiliary stream gains.
    const std::string tactic_record =
        (std::filesystem::temp_directory_path() / ("model_bench_" + spec.name + "_b" + std::to_string(batch) + ".engine")).string();
    std::ofstream(tactic_record, std::ios::binary) << built->bytes;
    auto serial = build_engine(spec, *weights, batch, DataType::kFloat16, 0, tactic_record);
    auto serial_latency = serial.is_ok() ? time_enqueues(serial->engine, spec.latency_inputs(batch), options.warmup,
                                                         options.iterations, false)
                                         : Result<Latency>(serial.status());
    if (serial_latency.is_ok()) {
      std::printf("  fp16 b%-3lld one stream, same tactics: median %8.3f ms (two streams / one: %.3f)\n",
                  static_cast<long long>(batch), serial_latency->stats().median_ms,
                  stats.median_ms / serial_latency->stats().median_ms);
      entry["one_stream_median_ms"] = serial_latency->stats().median_ms;
    } else {
      fail("one-stream fp16 b" + std::to_string(batch), serial_latency.status());
    }
    std::remove(tactic_record.c_str());
    out["latency"].push_back(entry);
  }
  return passed;
}

int run(const Options& options) {
  cudaDeviceProp properties{};
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0 ||
      cudaGetDeviceProperties(&properties, 0) != cudaSuccess) {
    std::fprintf(stderr, "model_bench: no CUDA GPU\n");
    return 1;
  }
  json report = {{"device", properties.name},
                 {"compute_capability", std::to_string(properties.major) + "." + std::to_string(properties.minor)},
                 {"models", json::object()}};
  bool all_passed = true;
  for (const ModelSpec& spec : model_specs()) {
    if (std::find(options.models.begin(), options.models.end(), spec.name) == options.models.end()) continue;
    json out = {
        {"errors", json::array()}, {"builds", json::array()}, {"accuracy", json::object()}, {"latency", json::array()}};
    all_passed = bench_model(spec, options, out) && all_passed;
    report["models"][spec.name] = out;
    std::ofstream file(options.json_path);  // rewritten after each model: partial results survive
    if (!(file << report.dump(2) << "\n")) {
      std::fprintf(stderr, "model_bench: cannot write %s\n", options.json_path.c_str());
      return 1;
    }
  }
  std::printf("wrote %s; fp32 engines %s\n", options.json_path.c_str(), all_passed ? "all passed" : "NOT all passed");
  return all_passed ? 0 : 1;
}

}  // namespace
}  // namespace tensoracle::bench

int main(int argc, char** argv) {
  using namespace tensoracle::bench;
  Options options;
  CLI::App app{"ResNet-50 and BERT-base cuda engines: accuracy against PyTorch, fp16 latency"};
  app.add_option("--fixtures", options.fixtures, "scripts/gen-model-references.py --out directory")
      ->envname("TENSORACLE_MODEL_FIXTURES");
  app.add_option("--json", options.json_path, "report file")->capture_default_str();
  app.add_option("--models", options.models, "subset of resnet50,bert_encoder")->delimiter(',');
  app.add_option("--batches", options.batches, "batches of the fp16 latency engines")->delimiter(',');
  app.add_option("--warmup", options.warmup, "enqueues before timing")->check(CLI::NonNegativeNumber);
  app.add_option("--iterations", options.iterations, "timed enqueues")->check(CLI::Range(100, 1000000));
  bool no_profile = false;
  app.add_flag("--no-profile", no_profile, "skip the per-step profile");
  CLI11_PARSE(app, argc, argv);
  options.profile = !no_profile;
  if (options.fixtures.empty()) {
    // scripts/gpu-check runs every benchmark without arguments: say why there is nothing to do.
    std::printf(
        "model_bench: skipped, no references (--fixtures DIR or TENSORACLE_MODEL_FIXTURES; "
        "scripts/gen-model-references.py --out DIR makes them)\n");
    return 0;
  }
  return run(options);
}
