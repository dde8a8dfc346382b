// GEMM throughput of the "cublaslt.matmul" tactic family: for each size, the family's first
// candidate (heuristic rank 0, what a build at optimization level 0 takes) and the fastest of the
// heuristic list (what a tuned build takes), each the median of 20 runs after 5 warm-up runs,
// timed with CUDA events. One line per size:
//
//   matmul bf16 8192x8192x8192: rank0 652.1 TFLOP/s (1.686 ms), best 661.0 TFLOP/s (1.663 ms, cublaslt.matmul#3 of 14)
//
// Usage: matmul_bench [--quick]   (--quick: the 8192^3 bf16 line only)
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/cuda/cublaslt/lt_gemm.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cuda_tactic.h"
#include "core/errors.h"
#include "tensoracle/float_formats.h"
#include "tensoracle/network.h"

namespace tensoracle::backends::cuda {
namespace {

constexpr int kWarmup = 5;
constexpr int kTimed = 20;

struct Size {
  DataType type;
  int64_t m, n, k;
  bool bias_gelu = false;  // fused bias + gelu_tanh epilogue
};

struct DeviceMemory {
  void* ptr = nullptr;
  DeviceMemory() = default;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  ~DeviceMemory() {
    if (ptr) cudaFree(ptr);
  }
};

// Random values in [-1, 1] (a 1 Mi-element block tiled: large operands upload fast).
Status fill_random(void* device, DataType type, int64_t count, uint32_t seed) {
  constexpr int64_t kBlock = int64_t{1} << 20;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> block(static_cast<size_t>(std::min(count, kBlock)));
  for (float& v : block) v = value(rng);
  const size_t element = data_type_size(type);
  std::vector<unsigned char> converted(block.size() * element);
  convert_elements(DataType::kFloat32, block.data(), type, converted.data(), block.size());
  for (int64_t at = 0; at < count; at += kBlock) {
    const int64_t n = std::min(kBlock, count - at);
    TO_CUDA_RETURN_IF_ERROR(cudaMemcpy(static_cast<char*>(device) + at * static_cast<int64_t>(element), converted.data(),
                                       static_cast<size_t>(n) * element, cudaMemcpyHostToDevice));
  }
  return Status::ok();
}

Result<double> median_ms(CudaTactic& tactic, const StepInstance& step, const StepBuffers& buffers, const RunContext& ctx,
                         cudaEvent_t begin, cudaEvent_t end) {
  for (int i = 0; i < kWarmup; ++i) TO_RETURN_IF_ERROR(tactic.run(step, buffers, ctx));
  std::vector<double> times;
  for (int i = 0; i < kTimed; ++i) {
    TO_CUDA_RETURN_IF_ERROR(cudaEventRecord(begin, ctx.stream));
    TO_RETURN_IF_ERROR(tactic.run(step, buffers, ctx));
    TO_CUDA_RETURN_IF_ERROR(cudaEventRecord(end, ctx.stream));
    TO_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(end));
    float ms = 0;
    TO_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, begin, end));
    times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  return (times[kTimed / 2 - 1] + times[kTimed / 2]) / 2;
}

Result<std::string> bench_size(const Size& size, const RunContext& ctx, cudaEvent_t begin, cudaEvent_t end) {
  Network net;
  Tensor a = net.add_input("a", size.type, {size.m, size.k});
  Tensor b = net.add_input("b", size.type, {size.k, size.n});
  Tensor bias = net.add_input("bias", size.type, {size.n});
  Tensor y = net.matmul(a, b, MatMulAttributes().set_name("mm"));
  TO_RETURN_IF_ERROR(net.status());
  const TensorDesc product = net.tensor(y).desc;
  const Node& mm = net.node(net.find_node("mm").value());
  const TensorDesc a_desc = net.tensor(a).desc, b_desc = net.tensor(b).desc;
  StepInstance step{NodeInstance{mm, {&a_desc, &b_desc}, {product}}, {Layout::kLinear, Layout::kLinear}, {Layout::kLinear},
                    {}, {}, {product}, {}};
  if (size.bias_gelu) {  // the epilogue as the planner forms it: add(r0, r1) -> gelu_tanh(r2)
    step.program.inputs = {product, net.tensor(bias).desc};
    PointwiseInstr add;
    add.code = PointwiseCode::kAdd, add.a = 0, add.b = 1, add.type = size.type;
    PointwiseInstr gelu;
    gelu.code = PointwiseCode::kGeluTanh, gelu.a = 2, gelu.type = size.type;
    step.program.instrs = {add, gelu};
    step.extra_input_layouts = {Layout::kLinear};
  }

  const TacticFamily* family = tactic_families().find("cublaslt.matmul");
  if (!family) return not_found("the cublaslt.matmul family is not registered");
  TO_RETURN_IF_ERROR(family->can_implement(step, *ctx.device));
  TO_ASSIGN_OR_RETURN(auto candidates, family->candidates(step, ctx, kLtMaxAlgorithms));

  const size_t element = data_type_size(size.type);
  DeviceMemory da, db, dd, dbias, workspace;
  size_t workspace_bytes = 0;
  for (const auto& t : candidates) workspace_bytes = std::max(workspace_bytes, t->workspace_size(step));
  TO_CUDA_RETURN_IF_ERROR(cudaMalloc(&da.ptr, static_cast<size_t>(size.m * size.k) * element));
  TO_CUDA_RETURN_IF_ERROR(cudaMalloc(&db.ptr, static_cast<size_t>(size.k * size.n) * element));
  TO_CUDA_RETURN_IF_ERROR(cudaMalloc(&dd.ptr, static_cast<size_t>(size.m * size.n) * element));
  TO_CUDA_RETURN_IF_ERROR(cudaMalloc(&dbias.ptr, static_cast<size_t>(size.n) * element));
  if (workspace_bytes) TO_CUDA_RETURN_IF_ERROR(cudaMalloc(&workspace.ptr, workspace_bytes));
  TO_RETURN_IF_ERROR(fill_random(da.ptr, size.type, size.m * size.k, 1));
  TO_RETURN_IF_ERROR(fill_random(db.ptr, size.type, size.k * size.n, 2));
  TO_RETURN_IF_ERROR(fill_random(dbias.ptr, size.type, size.n, 3));
  StepBuffers buffers;
  buffers.inputs = {DeviceTensor{size.type, a_desc.shape, Layout::kLinear, da.ptr},
                    DeviceTensor{size.type, b_desc.shape, Layout::kLinear, db.ptr}};
  if (size.bias_gelu) buffers.extra_inputs = {DeviceTensor{size.type, {size.n}, Layout::kLinear, dbias.ptr}};
  buffers.outputs = {DeviceTensor{size.type, product.shape, Layout::kLinear, dd.ptr}};
  buffers.workspace = workspace.ptr;
  buffers.workspace_bytes = workspace_bytes;

  double first_ms = -1, best_ms = -1;
  std::string best_name;
  int failed = 0;
  for (size_t i = 0; i < candidates.size(); ++i) {
    auto ms = median_ms(*candidates[i], step, buffers, ctx, begin, end);
    if (!ms.is_ok()) {  // an algorithm the heuristic offered but that fails here: not the tactic's number
      if (i == 0) return ms.status();
      ++failed;
      continue;
    }
    if (i == 0) first_ms = *ms;
    if (best_ms < 0 || *ms < best_ms) best_ms = *ms, best_name = candidates[i]->name();
  }
  const double flop = 2.0 * static_cast<double>(size.m) * static_cast<double>(size.n) * static_cast<double>(size.k);
  const auto tflops = [&](double ms) { return flop / (ms * 1e-3) / 1e12; };
  return fmt::format("matmul {} {}x{}x{}{}: rank0 {:.1f} TFLOP/s ({:.3f} ms), best {:.1f} TFLOP/s ({:.3f} ms, {} of {}{})",
                     data_type_name(size.type), size.m, size.n, size.k, size.bias_gelu ? " +bias+gelu_tanh" : "",
                     tflops(first_ms), first_ms, tflops(best_ms), best_ms, best_name, candidates.size(),
                     failed ? fmt::format(", {} failed", failed) : std::string());
}

int run(bool quick) {
  int count = 0;
  const cudaError_t probe = cudaGetDeviceCount(&count);
  if (probe != cudaSuccess || count == 0) {
    std::fprintf(stderr, "matmul_bench: no CUDA GPU (%s)\n", probe != cudaSuccess ? cudaGetErrorString(probe) : "0 devices");
    return 1;
  }
  cudaDeviceProp properties{};
  cudaGetDeviceProperties(&properties, 0);
  DeviceInfo device;
  device.cc_major = properties.major;
  device.cc_minor = properties.minor;
  device.sm_count = properties.multiProcessorCount;
  cudaStream_t stream = nullptr;
  cublasLtHandle_t handle = nullptr;
  cudaEvent_t begin = nullptr, end = nullptr;
  if (cudaStreamCreate(&stream) != cudaSuccess || cublasLtCreate(&handle) != CUBLAS_STATUS_SUCCESS ||
      cudaEventCreate(&begin) != cudaSuccess || cudaEventCreate(&end) != cudaSuccess) {
    std::fprintf(stderr, "matmul_bench: cannot create a stream, events or a cuBLASLt handle\n");
    return 1;
  }
  const RunContext ctx{stream, handle, nullptr, &device};
  std::printf("matmul_bench on %s (sm_%d%d), cuBLASLt %zu; median of %d after %d warm-up\n", properties.name,
              properties.major, properties.minor, cublasLtGetVersion(), kTimed, kWarmup);
  std::vector<Size> sizes = {{DataType::kBFloat16, 8192, 8192, 8192}};
  if (!quick) {
    sizes.push_back({DataType::kBFloat16, 8192, 8192, 8192, true});
    sizes.push_back({DataType::kFloat16, 8192, 8192, 8192});
    sizes.push_back({DataType::kBFloat16, 4096, 4096, 4096});
    sizes.push_back({DataType::kBFloat16, 16384, 4096, 1024, true});  // an MLP up-projection (tokens x hidden)
    sizes.push_back({DataType::kFloat32, 4096, 4096, 4096});          // true fp32 (no TF32)
  }
  int status = 0;
  for (const Size& size : sizes) {
    auto line = bench_size(size, ctx, begin, end);
    if (line.is_ok()) {
      std::printf("%s\n", line->c_str());
    } else {
      std::printf("matmul %s %lldx%lldx%lld: FAILED %s\n", std::string(data_type_name(size.type)).c_str(),
                  static_cast<long long>(size.m), static_cast<long long>(size.n), static_cast<long long>(size.k),
                  line.status().to_string().c_str());
      status = 1;
    }
    std::fflush(stdout);
  }
  cudaEventDestroy(begin);
  cudaEventDestroy(end);
  cublasLtDestroy(handle);
  cudaStreamDestroy(stream);
  return status;
}

}  // namespace
}  // namespace tensoracle::backends::cuda

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  return tensoracle::backends::cuda::run(quick);
}
