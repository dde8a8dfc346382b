// ResNet-50 v1.5 (batch 1, 224x224, fp32, random weights) forward on the CPU reference backend.
// Target (docs/perf/cpu.md): <= 3 s on the 2-core development machine.
#include <benchmark/benchmark.h>

#include <cmath>
#include <string>

#include "backends/registry.h"
#include "random_weights.h"

namespace tensoracle::bench {
namespace {

struct ResNetBuilder {
  Network& net;
  uint64_t seed = 1;

  Tensor conv_bn(Tensor x, int64_t in, int64_t out, int64_t k, int64_t stride, bool relu) {
    const float scale = std::sqrt(2.0f / static_cast<float>(in * k * k));
    Tensor w = random_constant(net, {out, in, k, k}, scale, seed++);
    Tensor y = net.convolution(x, w, {}, ConvolutionAttributes().set_stride({stride, stride}).set_padding({k / 2, k / 2}));
    auto per_channel = [&](float lo, float hi) {
      HostArray a = random_array({out}, seed++);
      for (int64_t i = 0; i < out; ++i) a.data_as<float>()[i] = lo + (hi - lo) * (a.data_as<float>()[i] + 1) / 2;
      return net.add_constant(std::move(a));
    };
    y = net.batch_norm(y, per_channel(0.5f, 1.0f), per_channel(-0.1f, 0.1f), per_channel(-0.1f, 0.1f),
                       per_channel(0.5f, 1.5f));
    return relu ? net.relu(y) : y;
  }

  Tensor bottleneck(Tensor x, int64_t in, int64_t mid, int64_t stride) {
    const int64_t out = mid * 4;
    Tensor y = conv_bn(x, in, mid, 1, 1, true);
    y = conv_bn(y, mid, mid, 3, stride, true);  // v1.5: the stride sits on the 3x3
    y = conv_bn(y, mid, out, 1, 1, false);
    Tensor shortcut = (stride != 1 || in != out) ? conv_bn(x, in, out, 1, stride, false) : x;
    return net.relu(net.add(y, shortcut));
  }

  void build() {
    Tensor x = net.add_input("image", DataType::kFloat32, {1, 3, 224, 224});
    x = conv_bn(x, 3, 64, 7, 2, true);
    x = net.pooling(x, PoolingAttributes().set_window({3, 3}).set_stride({2, 2}).set_padding({1, 1}));
    int64_t in = 64;
    const int64_t blocks[] = {3, 4, 6, 3};
    for (int stage = 0; stage < 4; ++stage) {
      const int64_t mid = 64 << stage;
      for (int64_t b = 0; b < blocks[stage]; ++b) {
        x = bottleneck(x, in, mid, (b == 0 && stage > 0) ? 2 : 1);
        in = mid * 4;
      }
    }
    x = net.pooling(x, PoolingAttributes().set_kind(PoolingKind::kAverage).set_global(true));
    x = net.reshape(x, ReshapeAttributes().set_shape({0, -1}));
    Tensor fc = random_constant(net, {1000, 2048}, 0.02f, seed++);
    x = net.add(net.matmul(x, fc, MatMulAttributes().set_transpose_b(true)), random_constant(net, {1000}, 0.01f, seed++));
    net.mark_output(net.softmax(x), "probs");
  }
};

void BM_ResNet50Forward(benchmark::State& state) {
  Network net;
  ResNetBuilder{net}.build();
  if (!net.status().is_ok()) {
    state.SkipWithError(net.status().to_string().c_str());
    return;
  }
  auto cpu = backends::create_backend("cpu").value();
  HostArray image = random_array({1, 3, 224, 224}, 99);
  for (auto _ : state) {
    auto out = cpu->execute(net, {{"image", image.view()}});
    if (!out.is_ok()) {
      state.SkipWithError(out.status().to_string().c_str());
      return;
    }
    benchmark::DoNotOptimize(out->begin()->second.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2 * 4.1e9, benchmark::Counter::kIsIterationInvariantRate);
}
// Process CPU time (all threads) is reported beside wall time: on a shared, loaded machine it
// is the stable number; on the idle 2-core machine wall time is at most this.
BENCHMARK(BM_ResNet50Forward)->Unit(benchmark::kMillisecond)->MinTime(3.0)->MeasureProcessCPUTime()->UseRealTime();

}  // namespace
}  // namespace tensoracle::bench
BENCHMARK_MAIN();
