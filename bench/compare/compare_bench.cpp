// compare_outputs throughput against NumPy and against this machine's memory-copy bandwidth, all
// measured in one run (docs/perf/compare.md records the numbers).
//
//   build/bench/bench/compare/compare_bench [--benchmark_filter=...]
//
// BM_CompareOutputs   compare_outputs on two fp32 arrays (with and without a tolerance check)
// BM_Memcpy           memcpy of one 1 GiB buffer, on one thread and split over every thread
// BM_NumPy            scripts/bench-compare-numpy.py as a subprocess: the same metrics in NumPy on
//                     arrays of the same size; its own timer excludes start-up and input generation
// BM_Summary          the ratios the performance goals are stated in, from the runs above:
//                     speedup over the faster NumPy variant, and input bytes/s over memcpy bytes/s
// TENSORACLE_PYTHON overrides the interpreter (default: .venv/bin/python of the source tree).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tensoracle/array.h"
#include "tensoracle/compare.h"

namespace tensoracle {
namespace {

constexpr int kLog2Elements = 28;  // 2^28 fp32 = 1 GiB per array
constexpr int64_t kElements = int64_t{1} << kLog2Elements;

// Best (highest) bytes/s of each measurement in this run, for BM_Summary.
std::map<std::string, double>& results() {
  static std::map<std::string, double> table;
  return table;
}

void record_best(const std::string& key, double value) {
  double& slot = results()[key];
  slot = std::max(slot, value);
}

// Fills `values` with reference-like data; `candidate` is a small perturbation of it.
void fill(float* reference, float* candidate, int64_t count) {
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (int64_t i = 0; i < count; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const float unit = static_cast<float>(state >> 40) * 0x1.0p-24f;  // [0, 1)
    reference[i] = 4.0f * unit - 2.0f;
    candidate[i] = reference[i] * (1.0f + 1e-4f * (unit - 0.5f));
  }
}

struct Inputs {
  HostArray candidate;
  HostArray reference;
};

const Inputs& inputs(int64_t count) {
  static std::map<int64_t, std::unique_ptr<Inputs>> cache;
  auto& slot = cache[count];
  if (!slot) {
    slot = std::make_unique<Inputs>();
    slot->candidate = HostArray::zeros(DataType::kFloat32, Dims{count}).value();
    slot->reference = HostArray::zeros(DataType::kFloat32, Dims{count}).value();
    fill(slot->reference.data_as<float>(), slot->candidate.data_as<float>(), count);
  }
  return *slot;
}

void BM_CompareOutputs(benchmark::State& state) {
  const int64_t count = int64_t{1} << state.range(0);
  const bool with_tolerance = state.range(1) != 0;
  const Inputs& in = inputs(count);
  CompareOptions options;
  if (with_tolerance) options.tolerance = Tolerance{1e-5, 1e-3};
  for (auto _ : state) {
    auto result = compare_outputs(in.candidate.view(), in.reference.view(), options);
    if (!result.is_ok()) state.SkipWithError(result.status().to_string().c_str());
    benchmark::DoNotOptimize(result);
  }
  const auto input_bytes = static_cast<double>(2 * count * sizeof(float));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 2 * count * static_cast<int64_t>(sizeof(float)));
  state.counters["elements_per_s"] = benchmark::Counter(static_cast<double>(count), benchmark::Counter::kIsIterationInvariantRate);
  if (count == kElements) {
    state.counters["input_GB"] = benchmark::Counter(input_bytes / 1e9, benchmark::Counter::kIsIterationInvariantRate);  // shown as GB/s
  }
  state.SetLabel(with_tolerance ? "fp32, with tolerance" : "fp32, no tolerance");
}
BENCHMARK(BM_CompareOutputs)
    ->ArgsProduct({{20, 24, kLog2Elements}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime();

// Records the 2^28-element throughput with a tolerance (the NumPy script computes the same).
void BM_CompareOutputsGoal(benchmark::State& state) {
  const Inputs& in = inputs(kElements);
  CompareOptions options;
  options.tolerance = Tolerance{1e-5, 1e-3};
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    auto result = compare_outputs(in.candidate.view(), in.reference.view(), options);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    benchmark::DoNotOptimize(result);
    state.SetIterationTime(seconds);
    record_best("compare_input_Bps", 2.0 * kElements * sizeof(float) / seconds);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 2 * kElements * static_cast<int64_t>(sizeof(float)));
}
BENCHMARK(BM_CompareOutputsGoal)->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(5);

void BM_Memcpy(benchmark::State& state) {
  const auto threads = static_cast<unsigned>(state.range(0) == 0 ? std::max(1u, std::thread::hardware_concurrency())
                                                                 : state.range(0));
  const size_t bytes = static_cast<size_t>(kElements) * sizeof(float);
  const HostArray& source = inputs(kElements).reference;
  static HostArray destination = HostArray::zeros(DataType::kFloat32, Dims{kElements}).value();
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    const size_t slice = bytes / threads;
    for (unsigned t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        const size_t begin = t * slice;
        const size_t size = t + 1 == threads ? bytes - begin : slice;
        std::memcpy(static_cast<char*>(destination.data()) + begin, static_cast<const char*>(source.data()) + begin,
                    size);
      });
    }
    for (auto& worker : workers) worker.join();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    benchmark::ClobberMemory();
    state.SetIterationTime(seconds);
    record_best("memcpy_Bps", static_cast<double>(bytes) / seconds);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.SetLabel(std::to_string(threads) + " thread(s), bytes copied");
}
BENCHMARK(BM_Memcpy)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(5);

std::string python_command() {
  const char* python = std::getenv("TENSORACLE_PYTHON");
  const std::string interpreter = python != nullptr ? python : TENSORACLE_SOURCE_DIR "/.venv/bin/python";
  // OPENBLAS_CORETYPE may pin OpenBLAS to a slower kernel for other tools; NumPy gets its default.
  return "env -u OPENBLAS_CORETYPE '" + interpreter + "' '" TENSORACLE_SOURCE_DIR
         "/scripts/bench-compare-numpy.py' --log2n " + std::to_string(kLog2Elements) + " --repeats 3";
}

void BM_NumPy(benchmark::State& state) {
  for (auto _ : state) {
    std::string output;
    FILE* pipe = popen(python_command().c_str(), "r");
    if (pipe == nullptr) {
      state.SkipWithError("cannot start the NumPy script");
      return;
    }
    char buffer[4096];
    for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
    if (pclose(pipe) != 0) {
      state.SkipWithError(("the NumPy script failed: " + output).c_str());
      return;
    }
    const auto report = nlohmann::json::parse(output, nullptr, false);
    if (report.is_discarded()) {
      state.SkipWithError(("unexpected NumPy script output: " + output).c_str());
      return;
    }
    const double bytes = 2.0 * kElements * sizeof(float);
    state.SetIterationTime(report["best_s"].get<double>());
    state.counters["whole_array_input_GBps"] = bytes / report["whole_s"].get<double>() / 1e9;
    state.counters["chunked_input_GBps"] = bytes / report["chunked_s"].get<double>() / 1e9;
    record_best("numpy_input_Bps", bytes / report["best_s"].get<double>());
    state.SetLabel("numpy " + report["numpy_version"].get<std::string>() + ", faster of whole-array and chunked");
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 2 * kElements * static_cast<int64_t>(sizeof(float)));
}
BENCHMARK(BM_NumPy)->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(1);

void BM_Summary(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(results().size());
  const auto& r = results();
  const auto get = [&](const char* key) { return r.count(key) != 0 ? r.at(key) : 0.0; };
  const double compare = get("compare_input_Bps"), numpy = get("numpy_input_Bps"), memcpy = get("memcpy_Bps");
  if (compare == 0.0 || numpy == 0.0 || memcpy == 0.0) {
    state.SkipWithError("run BM_CompareOutputsGoal, BM_Memcpy and BM_NumPy first (same filter)");
    return;
  }
  state.counters["compare_input_GBps"] = compare / 1e9;
  state.counters["numpy_input_GBps"] = numpy / 1e9;
  state.counters["memcpy_GBps"] = memcpy / 1e9;
  state.counters["speedup_vs_numpy"] = compare / numpy;               // goal >= 4
  state.counters["fraction_of_memcpy"] = compare / memcpy;            // goal >= 0.5
}
BENCHMARK(BM_Summary)->Iterations(1);

}  // namespace
}  // namespace tensoracle

BENCHMARK_MAIN();
