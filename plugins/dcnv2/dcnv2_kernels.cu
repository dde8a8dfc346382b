// The CUDA kernels of tensoracle::dcnv2 (dcnv2_cuda.h) and their launch table.
//
// Two kernels per element type (f32, f16), extern "C" so that their names are the cubin symbol
// names a bundle will fetch them by:
//   tensoracle_dcnv2_im2col_<t>  one thread per column element (dcnv2_column_value), grid-stride
//   tensoracle_dcnv2_gemm_<t>    y[n][g] = W[g] · columns[n][g] + bias[g]: 64x64 output tiles,
//                                16-deep slices of K staged in shared memory as fp32, 256
//                                threads each accumulating a 4x4 block in fp32 registers with
//                                plain FMAs (no tensor cores, so fp32 never rounds through TF32)
// The fp16 kernels read and write fp16 and compute in fp32, as the CPU implementation does.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstring>

#include "dcnv2_cuda.h"

namespace tensoracle_plugins {
namespace {

constexpr int kTileM = 64, kTileN = 64, kTileK = 16, kGemmThreads = 256;
constexpr int kIm2colThreads = 256, kIm2colMaxBlocks = 8192;

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
template <typename T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) { return v; }
template <>
__device__ __forceinline__ __half from_float<__half>(float v) { return __float2half_rn(v); }

template <typename T>
struct Loader {
  const T* data;
  __device__ float operator()(int64_t i) const { return to_float(data[i]); }
};

template <typename T>
__device__ void im2col(const Dcnv2Geometry& g, const T* x, const T* offset, const T* mask, T* columns) {
  const int64_t total = g.column_elements();
  const int64_t step = int64_t{gridDim.x} * blockDim.x;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < total; i += step)
    columns[i] = from_float<T>(dcnv2_column_value(g, i, Loader<T>{x}, Loader<T>{offset}, Loader<T>{mask}));
}

// One 64x64 tile of one (image, group) GEMM: A = weight rows of the group [M x Kd], B = the
// group's column rows [Kd x P], out = y rows [M x P].
template <typename T>
__device__ void gemm(const Dcnv2Geometry& g, const T* weight, const T* bias, const T* columns, T* y) {
  __shared__ float a_tile[kTileK][kTileM + 1];  // transposed: a_tile[k][m]; +1 avoids bank conflicts
  __shared__ float b_tile[kTileK][kTileN];
  const int64_t m_size = g.gemm_m(), k_size = g.gemm_k(), n_size = g.out_pixels();
  const int64_t image = blockIdx.z / g.groups, group = blockIdx.z % g.groups;
  const T* a = weight + group * m_size * k_size;
  const T* b = columns + (image * g.column_rows() + group * k_size) * n_size;
  T* out = y + (image * g.out_channels + group * m_size) * n_size;
  const int64_t m0 = int64_t{blockIdx.y} * kTileM, n0 = int64_t{blockIdx.x} * kTileN;
  const int tid = threadIdx.x;
  const int tm = (tid / (kTileN / 4)) * 4, tn = (tid % (kTileN / 4)) * 4;  // this thread's 4x4 block

  float acc[4][4] = {};
  for (int64_t k0 = 0; k0 < k_size; k0 += kTileK) {
    // Each thread stages 4 elements of A (64x16) and 4 of B (16x64); out of range reads 0.
    for (int e = tid; e < kTileM * kTileK; e += kGemmThreads) {
      const int mm = e / kTileK, kk = e % kTileK;
      const int64_t row = m0 + mm, col = k0 + kk;
      a_tile[kk][mm] = row < m_size && col < k_size ? to_float(a[row * k_size + col]) : 0.0f;
    }
    for (int e = tid; e < kTileK * kTileN; e += kGemmThreads) {
      const int kk = e / kTileN, nn = e % kTileN;
      const int64_t row = k0 + kk, col = n0 + nn;
      b_tile[kk][nn] = row < k_size && col < n_size ? to_float(b[row * n_size + col]) : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTileK; ++kk) {
      float av[4], bv[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) av[i] = a_tile[kk][tm + i], bv[i] = b_tile[kk][tn + i];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int64_t row = m0 + tm + i;
    if (row >= m_size) continue;
    const float bias_value = to_float(bias[group * m_size + row]);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int64_t col = n0 + tn + j;
      if (col < n_size) out[row * n_size + col] = from_float<T>(acc[i][j] + bias_value);
    }
  }
}

}  // namespace
}  // namespace tensoracle_plugins

using tensoracle_plugins::Dcnv2Geometry;

extern "C" __global__ void tensoracle_dcnv2_im2col_f32(Dcnv2Geometry g, const float* x, const float* offset,
                                                       const float* mask, float* columns) {
  tensoracle_plugins::im2col(g, x, offset, mask, columns);
}
extern "C" __global__ void tensoracle_dcnv2_im2col_f16(Dcnv2Geometry g, const __half* x, const __half* offset,
                                                       const __half* mask, __half* columns) {
  tensoracle_plugins::im2col(g, x, offset, mask, columns);
}
extern "C" __global__ void __launch_bounds__(256) tensoracle_dcnv2_gemm_f32(Dcnv2Geometry g, const float* weight,
                                                                           const float* bias, const float* columns,
                                                                           float* y) {
  tensoracle_plugins::gemm(g, weight, bias, columns, y);
}
extern "C" __global__ void __launch_bounds__(256) tensoracle_dcnv2_gemm_f16(Dcnv2Geometry g, const __half* weight,
                                                                           const __half* bias, const __half* columns,
                                                                           __half* y) {
  tensoracle_plugins::gemm(g, weight, bias, columns, y);
}

namespace tensoracle_plugins {
namespace {

// The launch table: every kernel by its symbol name. Moving the kernels into a cubin bundle
// replaces this lookup with one that fetches the kernel of that name from the loaded bundle.
const void* kernel_by_name(const char* name) {
  static const struct {
    const char* name;
    const void* function;
  } kKernels[] = {
      {"tensoracle_dcnv2_im2col_f32", reinterpret_cast<const void*>(&tensoracle_dcnv2_im2col_f32)},
      {"tensoracle_dcnv2_im2col_f16", reinterpret_cast<const void*>(&tensoracle_dcnv2_im2col_f16)},
      {"tensoracle_dcnv2_gemm_f32", reinterpret_cast<const void*>(&tensoracle_dcnv2_gemm_f32)},
      {"tensoracle_dcnv2_gemm_f16", reinterpret_cast<const void*>(&tensoracle_dcnv2_gemm_f16)},
  };
  for (const auto& kernel : kKernels)
    if (std::strcmp(kernel.name, name) == 0) return kernel.function;
  return nullptr;
}

std::string launch(const char* name, dim3 grid, dim3 block, void** args, cudaStream_t stream) {
  const void* function = kernel_by_name(name);
  if (function == nullptr) return std::string("no kernel named ") + name;
  const cudaError_t error = cudaLaunchKernel(function, grid, block, args, 0, stream);
  if (error != cudaSuccess)
    return std::string("cudaLaunchKernel(") + name + "): " + cudaGetErrorName(error) + ": " + cudaGetErrorString(error);
  return {};
}

}  // namespace

std::string dcnv2_enqueue_cuda(Dcnv2Type type, const Dcnv2Geometry& geometry, const Dcnv2DeviceBuffers& buffers,
                               void* stream) noexcept {
  const bool half = type == Dcnv2Type::kFloat16;
  const auto s = static_cast<cudaStream_t>(stream);
  const int64_t tiles_m = (geometry.gemm_m() + kTileM - 1) / kTileM;
  const int64_t tiles_n = (geometry.out_pixels() + kTileN - 1) / kTileN;
  const int64_t images_groups = int64_t{geometry.batch} * geometry.groups;
  if (tiles_m > 65535 || images_groups > 65535 || tiles_n > 0x7FFFFFFF)
    return "the GEMM grid (" + std::to_string(tiles_n) + " x " + std::to_string(tiles_m) + " x " +
           std::to_string(images_groups) + " tiles) exceeds CUDA's grid limits";
  Dcnv2Geometry g = geometry;
  const void* x = buffers.x;
  const void* offset = buffers.offset;
  const void* mask = buffers.mask;
  void* columns = buffers.columns;
  void* im2col_args[] = {&g, &x, &offset, &mask, &columns};
  const int64_t blocks = (g.column_elements() + kIm2colThreads - 1) / kIm2colThreads;
  const dim3 im2col_grid(static_cast<unsigned>(blocks < kIm2colMaxBlocks ? blocks : kIm2colMaxBlocks));
  std::string error = launch(half ? "tensoracle_dcnv2_im2col_f16" : "tensoracle_dcnv2_im2col_f32", im2col_grid,
                             dim3(kIm2colThreads), im2col_args, s);
  if (!error.empty()) return error;

  const void* weight = buffers.weight;
  const void* bias = buffers.bias;
  const void* columns_in = buffers.columns;
  void* y = buffers.y;
  void* gemm_args[] = {&g, &weight, &bias, &columns_in, &y};
  const dim3 gemm_grid(static_cast<unsigned>(tiles_n), static_cast<unsigned>(tiles_m), static_cast<unsigned>(images_groups));
  return launch(half ? "tensoracle_dcnv2_gemm_f16" : "tensoracle_dcnv2_gemm_f32", gemm_grid, dim3(kGemmThreads),
                gemm_args, s);
}

}  // namespace tensoracle_plugins
