// What CUTLASS's sm90 int8 GEMM gives at BERT-base's shapes with its plain epilogue
// (d = alpha · acc as fp16) beside our Q/DQ epilogue kernels (sm90_qgemm.h), so that a slow
// kernel can be traced to its mainloop configuration or to its epilogue; then our fp8 kernels and
// the quantizing ones BERT's FFN up runs. Medians of CUDA-event times after warm-up, each kernel
// launched with its parameters built once.
#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/kernel/gemm_universal.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cuda/cutlass/sm90_qgemm.h"

namespace {

using namespace cute;
using tensoracle::DataType;
using tensoracle::backends::cuda::QuantizedActivation;
using tensoracle::backends::cuda::Sm90GemmTile;
using tensoracle::backends::cuda::Sm90QuantizedGemm;
using tensoracle::backends::cuda::Sm90QuantizedGemmArgs;

// Launches per kernel; `--warmup N --timed N` change them (a profiler wants one or two), and
// `--shape NAME` keeps one of the shapes.
int warmup = 10, timed = 50;

using PlainEpilogue = cutlass::epilogue::fusion::LinearCombination<cutlass::half_t, float, void, float>;
// The same with a bias per column loaded in the epilogue: what a vector read costs each tile.
using BiasEpilogue = cutlass::epilogue::fusion::LinCombPerColBias<cutlass::half_t, float, cutlass::half_t, void, float>;

template <class TileShape, class ClusterShape, class Fusion = PlainEpilogue>
struct PlainInt8Gemm {
  static constexpr bool kBias = !std::is_same_v<Fusion, PlainEpilogue>;
  using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, int32_t, float, void, cutlass::layout::RowMajor, 8, cutlass::half_t,
      cutlass::layout::RowMajor, 8, cutlass::epilogue::TmaWarpSpecializedCooperative, Fusion>::CollectiveOp;
  using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, int8_t, cutlass::layout::RowMajor, 16, int8_t,
      cutlass::layout::ColumnMajor, 16, int32_t, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
      cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;
  using GemmKernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop, CollectiveEpilogue>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;

  // Builds the launch for d[m, n] = acc / 1000 (fp16) and returns it; false when CUTLASS refuses.
  static std::function<bool(cudaStream_t)> launch(int m, int n, int k, const int8_t* a, const int8_t* b, cutlass::half_t* d,
                                                 int sm_count, const cutlass::half_t* bias = nullptr) {
    auto gemm = std::make_shared<Gemm>();
    typename Gemm::Arguments args;
    args.mode = cutlass::gemm::GemmUniversalMode::kGemm;
    args.problem_shape = {m, n, k, 1};
    args.mainloop = {a, make_stride(int64_t(k), _1{}, int64_t(m) * k), b, make_stride(int64_t(k), _1{}, int64_t(n) * k)};
    args.epilogue.thread.alpha = 1e-3f;
    args.epilogue.thread.beta = 0.0f;
    if constexpr (kBias) args.epilogue.thread.bias_ptr = bias;
    args.epilogue.ptr_D = d;
    args.epilogue.dD = make_stride(int64_t(n), _1{}, int64_t(m) * n);
    args.epilogue.dC = args.epilogue.dD;
    args.hw_info.sm_count = sm_count;
    if (gemm->can_implement(args) != cutlass::Status::kSuccess || Gemm::get_workspace_size(args) != 0 ||
        gemm->initialize(args, nullptr) != cutlass::Status::kSuccess)
      return {};
    return [gemm](cudaStream_t stream) { return gemm->run(stream) == cutlass::Status::kSuccess; };
  }
};

double median_ms(const std::function<bool(cudaStream_t)>& run, cudaStream_t stream, cudaEvent_t begin, cudaEvent_t end) {
  std::vector<double> times;
  for (int i = 0; i < warmup + timed; ++i) {
    cudaEventRecord(begin, stream);
    if (!run(stream)) return -1;
    cudaEventRecord(end, stream);
    cudaEventSynchronize(end);
    float ms = 0;
    cudaEventElapsedTime(&ms, begin, end);
    if (i >= warmup) times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  return cudaGetLastError() == cudaSuccess ? times[times.size() / 2] : -1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string only_shape;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--warmup") warmup = std::max(0, std::atoi(argv[i + 1]));
    else if (flag == "--timed") timed = std::max(1, std::atoi(argv[i + 1]));
    else if (flag == "--shape") only_shape = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: sm90_gemm_probe_bench [--shape qkv|ffn_up|ffn_down|attn_out|'qkv b1'|...] [--warmup N] [--timed N]\n");
      return 2;
    }
  }
  int sm_count = 0;
  cudaStream_t stream = nullptr;
  cudaEvent_t begin = nullptr, end = nullptr;
  if (cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0) != cudaSuccess ||
      cudaStreamCreate(&stream) != cudaSuccess || cudaEventCreate(&begin) != cudaSuccess || cudaEventCreate(&end) != cudaSuccess) {
    std::fprintf(stderr, "sm90_gemm_probe_bench: no GPU\n");
    return 1;
  }
  struct Shape3 { const char* name; int m, n, k; };
  const Shape3 shapes[] = {{"qkv", 4096, 2304, 768},       {"ffn_up", 4096, 3072, 768},   {"ffn_down", 4096, 768, 3072},
                           {"attn_out", 4096, 768, 768},   {"qkv b1", 128, 2304, 768},    {"ffn_up b1", 128, 3072, 768},
                           {"ffn_down b1", 128, 768, 3072}, {"attn_out b1", 128, 768, 768}};
  const size_t max_elems = size_t(4096) * 3072;
  int8_t *a = nullptr, *b = nullptr;
  cutlass::half_t *d = nullptr, *bias = nullptr;
  float* scales = nullptr;
  void* workspace = nullptr;  // what a kernel asks for (none so far)
  const size_t workspace_bytes = size_t(64) << 20;
  if (cudaMalloc(&a, max_elems) != cudaSuccess || cudaMalloc(&b, max_elems) != cudaSuccess ||
      cudaMalloc(&workspace, workspace_bytes) != cudaSuccess ||
      cudaMalloc(&d, max_elems * 2) != cudaSuccess || cudaMalloc(&bias, 4096 * 2) != cudaSuccess ||
      cudaMalloc(&scales, 4096 * 4) != cudaSuccess) {
    std::fprintf(stderr, "sm90_gemm_probe_bench: out of memory\n");
    return 1;
  }
  cudaMemset(a, 1, max_elems);
  cudaMemset(b, 2, max_elems);
  cudaMemset(bias, 0, 4096 * 2);
  const std::vector<float> ones(4096, 1.0f);  // scales of 1: a quantized output divides by one
  cudaMemcpy(scales, ones.data(), ones.size() * sizeof(float), cudaMemcpyHostToDevice);
  std::printf("sm90_gemm_probe_bench: int8 GEMMs (fp8 where it says), fp16 out unless it says, median ms of %d after %d "
              "warm-up\n",
              timed, warmup);
  int status = 0;
  for (const Shape3& s : shapes) {
    if (!only_shape.empty() && only_shape != s.name) continue;
    std::string line = std::string(s.name) + " " + std::to_string(s.m) + "x" + std::to_string(s.k) + "->" + std::to_string(s.n) + ":";
    const auto report = [&](const char* label, const std::function<bool(cudaStream_t)>& run) {
      const double ms = run ? median_ms(run, stream, begin, end) : -1;
      if (ms < 0) status = 1;
      char cell[96];
      std::snprintf(cell, sizeof cell, " | %s %s", label, ms < 0 ? "FAILED" : (std::to_string(ms).substr(0, 6) + " ms").c_str());
      line += cell;
    };
    report("plain 128x128 1x1", PlainInt8Gemm<Shape<_128, _128, _128>, Shape<_1, _1, _1>>::launch(s.m, s.n, s.k, a, b, d, sm_count));
    report("plain 128x256 1x1", PlainInt8Gemm<Shape<_128, _256, _128>, Shape<_1, _1, _1>>::launch(s.m, s.n, s.k, a, b, d, sm_count));
    report("plain 128x128 2x1", PlainInt8Gemm<Shape<_128, _128, _128>, Shape<_2, _1, _1>>::launch(s.m, s.n, s.k, a, b, d, sm_count));
    report("plain 128x128 + bias",
           PlainInt8Gemm<Shape<_128, _128, _128>, Shape<_1, _1, _1>, BiasEpilogue>::launch(s.m, s.n, s.k, a, b, d, sm_count, bias));
    // Our kernels, and what each vector the epilogue reads costs: the per-channel weight scales
    // and the bias each read N values a tile (a per-tensor scale and no bias read one and none).
    struct Variant {
      Sm90GemmTile tile;
      QuantizedActivation act;
      bool per_channel, with_bias;
      const char* label;
      DataType input = DataType::kInt8;
      bool quantized_output = false;  // d in the input's type, divided by a scale (BERT's FFN up)
    };
    const Sm90GemmTile coop = Sm90GemmTile::kCooperative128x128, pingpong = Sm90GemmTile::kPingpong128x128,
                       pingpong64 = Sm90GemmTile::kPingpong64x128;
    const QuantizedActivation none = QuantizedActivation::kNone, erf = QuantizedActivation::kGeluErf;
    const DataType fp8 = DataType::kFloat8E4M3, int8 = DataType::kInt8;
    for (const Variant& v : {Variant{coop, none, false, false, "ours coop, no vectors"},
                             Variant{coop, none, true, false, "ours coop, channel scales"},
                             Variant{coop, none, true, true, "ours coop, channel scales + bias"},
                             Variant{pingpong64, none, true, true, "ours pingpong 64x128, channel scales + bias"},
                             Variant{coop, erf, true, true, "ours coop, channel scales + bias + gelu_erf"},
                             Variant{pingpong, none, false, false, "ours pingpong 128x128, no vectors"},
                             Variant{pingpong, none, true, true, "ours pingpong 128x128, channel scales + bias"},
                             Variant{pingpong, erf, true, true, "ours pingpong 128x128, channel scales + bias + gelu_erf"},
                             Variant{pingpong, erf, true, true, "ours pingpong 128x128, ... + gelu_erf -> int8", int8, true},
                             Variant{coop, erf, false, true, "fp8 coop, bias + gelu_erf -> fp8", fp8, true},
                             Variant{pingpong64, erf, false, true, "fp8 pingpong 64x128, bias + gelu_erf -> fp8", fp8, true},
                             Variant{coop, none, false, true, "fp8 coop, bias", fp8},
                             Variant{coop, none, false, true, "fp8 coop, bias -> fp8", fp8, true}}) {
      Sm90QuantizedGemm gemm;
      gemm.tile = v.tile;
      gemm.input = v.input;
      gemm.output = v.quantized_output ? v.input : DataType::kFloat16;
      gemm.gelu_erf = v.act == QuantizedActivation::kGeluErf;
      std::shared_ptr<tensoracle::backends::cuda::Sm90QuantizedGemmLauncher> launcher =
          tensoracle::backends::cuda::make_sm90_quantized_gemm_launcher(gemm);
      if (!launcher || launcher->prepare() != cudaSuccess) {
        report(v.label, {});
        continue;
      }
      Sm90QuantizedGemmArgs args;
      args.m = s.m, args.n = s.n, args.k = s.k, args.a = a, args.b = b, args.d = d, args.a_scale = scales;
      args.b_scale = scales, args.b_per_channel = v.per_channel, args.bias = v.with_bias ? bias : nullptr;
      args.activation = v.act, args.sm_count = sm_count;
      args.y_scale = v.quantized_output ? scales : nullptr;
      if (tensoracle::backends::cuda::sm90_quantized_gemm_workspace(gemm, args) > workspace_bytes) {
        report(v.label, {});
        continue;
      }
      report(v.label, [launcher, args, workspace, workspace_bytes](cudaStream_t stream) {
        return launcher->launch(args, workspace, workspace_bytes, stream) == cudaSuccess;
      });
    }
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }
  return status;
}
