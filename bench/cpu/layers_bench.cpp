// Single layers on the CPU reference backend: where the ResNet-50 time goes.
#include <benchmark/benchmark.h>

#include "backends/registry.h"
#include "random_weights.h"

namespace tensoracle::bench {
namespace {

void run(benchmark::State& state, Network& net, const Dims& input_shape, double flops) {
  auto cpu = backends::create_backend("cpu").value();
  HostArray x = random_array(input_shape, 7);
  for (auto _ : state) {
    auto out = cpu->execute(net, {{"x", x.view()}});
    if (!out.is_ok()) {
      state.SkipWithError(out.status().to_string().c_str());
      return;
    }
  }
  state.counters["GFLOP/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
}

// 3x3 convolution, C -> C channels on an HxH image (a ResNet stage's middle layer).
void BM_Conv3x3(benchmark::State& state) {
  const int64_t c = state.range(0), h = state.range(1);
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {1, c, h, h});
  net.mark_output(net.convolution(x, random_constant(net, {c, c, 3, 3}, 0.05f, 1), {},
                                  ConvolutionAttributes().set_padding({1, 1})),
                  "y");
  run(state, net, {1, c, h, h}, 2.0 * c * c * 9 * h * h);
}
BENCHMARK(BM_Conv3x3)->Args({64, 56})->Args({256, 14})->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_MatMul(benchmark::State& state) {
  const int64_t n = state.range(0);
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {n, n});
  net.mark_output(net.matmul(x, random_constant(net, {n, n}, 0.05f, 2)), "y");
  run(state, net, {n, n}, 2.0 * n * n * n);
}
BENCHMARK(BM_MatMul)->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Add(benchmark::State& state) {
  Network net;
  Tensor x = net.add_input("x", DataType::kFloat32, {1, 256, 56, 56});
  net.mark_output(net.add(x, random_constant(net, {256, 1, 1}, 1.0f, 3)), "y");
  run(state, net, {1, 256, 56, 56}, 256.0 * 56 * 56);
}
BENCHMARK(BM_Add)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace tensoracle::bench
