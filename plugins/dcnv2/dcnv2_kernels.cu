// The CUDA kernels of tensoracle::dcnv2, compiled into the cubin bundle of libtensoracle_plugins.so
// (tensoracle_plugins_bundle/, one cubin per architecture), not into the library; the plugin
// fetches them by name (attach_kernels) and dcnv2_launch.cpp launches them.
//
// Two kernels per element type (f32, f16), extern "C" so that their names are the cubin symbol
// names (dcnv2_kernels.h):
//   tensoracle_dcnv2_im2col_<t>  one thread per column element (dcnv2_column_value), grid-stride;
//                                x LINEAR or (fp16) HWC8 as the geometry says, read through
//                                dcnv2_x_index like the CPU implementation. HWC8 is read element
//                                by element as LINEAR is, not 8 channels per 16-byte load: what
//                                it saves is the reformat in front of the plugin.
//   tensoracle_dcnv2_gemm_<t>    y[n][g] = W[g] · columns[n][g] + bias[g], bias fused, in 64x64
//                                output tiles. f32: 16-deep K slices in shared memory, 256
//                                threads each accumulating a 4x4 block with plain FMAs (no tensor
//                                cores, so fp32 never rounds through TF32: `bundle inspect
//                                --check-no-tf32` checks the SASS). f16: tensor cores through
//                                WMMA, fp16 products summed in fp32.
// The fp16 kernels read and write fp16 and sum in fp32, as the CPU implementation does.
#include <cuda_fp16.h>
#include <mma.h>

#include "dcnv2_kernels.h"
#include "dcnv2_math.h"

namespace tensoracle_plugins {
namespace {

constexpr int kTileM = kDcnv2TileM, kTileN = kDcnv2TileN;
constexpr int kTileK = 16, kF32Threads = kDcnv2F32Threads;  // fp32: K slice, threads
constexpr int kWmmaK = 32, kF16Threads = kDcnv2F16Threads;  // fp16: K slice, threads

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

// The part of one (image, group) GEMM a block computes: A = the group's weight rows [M x Kd],
// B = the image's column rows of the group [Kd x P], out = y's rows [M x P], from (m0, n0), for
// blockIdx (x: tile of P, y: tile of M, z: image * groups + group).
template <typename T>
struct GemmTile {
  const T* a;
  const T* b;
  const T* bias;  // the group's first output channel
  T* out;
  int64_t m_size, k_size, n_size, m0, n0;

  __device__ GemmTile(const Dcnv2Geometry& g, const T* weight, const T* bias_all, const T* columns, T* y, int tile_m,
                      int tile_n) {
    m_size = g.gemm_m(), k_size = g.gemm_k(), n_size = g.out_pixels();
    const int64_t image = blockIdx.z / g.groups, group = blockIdx.z % g.groups;
    a = weight + group * m_size * k_size;
    b = columns + (image * g.column_rows() + group * k_size) * n_size;
    bias = bias_all + group * m_size;
    out = y + (image * g.out_channels + group * m_size) * n_size;
    m0 = int64_t{blockIdx.y} * tile_m, n0 = int64_t{blockIdx.x} * tile_n;
  }
  // Element (row, col) of A and B as the tile loads them: zero outside the matrices.
  __device__ T a_at(int64_t row, int64_t col) const { return row < m_size && col < k_size ? a[row * k_size + col] : T(0.0f); }
  __device__ T b_at(int64_t row, int64_t col) const { return row < k_size && col < n_size ? b[row * n_size + col] : T(0.0f); }
  // Writes sum + bias to (row, col) when it is inside the output.
  __device__ void store(int64_t row, int64_t col, float sum) const {
    if (row < m_size && col < n_size) out[row * n_size + col] = from_float<T>(sum + to_float(bias[row]));
  }
};

// fp32: 64x64 tiles, 256 threads each accumulating a 4x4 block with plain FMAs.
__device__ void gemm_f32(const Dcnv2Geometry& g, const float* weight, const float* bias, const float* columns, float* y) {
  __shared__ float a_tile[kTileK][kTileM + 1];  // transposed: a_tile[k][m]; +1 avoids bank conflicts
  __shared__ float b_tile[kTileK][kTileN];
  const GemmTile<float> t(g, weight, bias, columns, y, kTileM, kTileN);
  const int tid = threadIdx.x;
  const int tm = (tid / (kTileN / 4)) * 4, tn = (tid % (kTileN / 4)) * 4;  // this thread's 4x4 block

  float acc[4][4] = {};
  for (int64_t k0 = 0; k0 < t.k_size; k0 += kTileK) {
    for (int e = tid; e < kTileM * kTileK; e += kF32Threads) a_tile[e % kTileK][e / kTileK] = t.a_at(t.m0 + e / kTileK, k0 + e % kTileK);
    for (int e = tid; e < kTileK * kTileN; e += kF32Threads) b_tile[e / kTileN][e % kTileN] = t.b_at(k0 + e / kTileN, t.n0 + e % kTileN);
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
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) t.store(t.m0 + tm + i, t.n0 + tn + j, acc[i][j]);
}

// fp16: tensor cores through WMMA, fp16 products accumulated in fp32. 64x64 tiles, 32-deep K
// slices staged in shared memory (zero beyond the matrices), 4 warps each owning a 32x32 quarter
// as 2x2 fragments of 16x16. The sums go through shared memory so that the bias, the conversion to
// fp16 and the bounds of partial tiles are applied per element.
__device__ void gemm_f16(const Dcnv2Geometry& g, const __half* weight, const __half* bias, const __half* columns,
                         __half* y) {
  using namespace nvcuda;
  // Row strides padded by 8 halves / 4 floats against bank conflicts; every fragment pointer
  // stays 32-byte aligned (rows of 16, columns of 16 elements).
  constexpr int kLdA = kWmmaK + 8, kLdB = kTileN + 8, kLdC = kTileN + 4;
  __shared__ __align__(32) __half a_tile[kTileM][kLdA];
  __shared__ __align__(32) __half b_tile[kWmmaK][kLdB];
  __shared__ __align__(32) float c_tile[kTileM][kLdC];
  const GemmTile<__half> t(g, weight, bias, columns, y, kTileM, kTileN);
  const int tid = threadIdx.x, warp = tid / 32;
  const int warp_m = (warp / 2) * 32, warp_n = (warp % 2) * 32;

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
  for (int64_t k0 = 0; k0 < t.k_size; k0 += kWmmaK) {
    for (int e = tid; e < kTileM * kWmmaK; e += kF16Threads) a_tile[e / kWmmaK][e % kWmmaK] = t.a_at(t.m0 + e / kWmmaK, k0 + e % kWmmaK);
    for (int e = tid; e < kWmmaK * kTileN; e += kF16Threads) b_tile[e / kTileN][e % kTileN] = t.b_at(k0 + e / kTileN, t.n0 + e % kTileN);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kWmmaK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a_frag[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b_frag[2];
#pragma unroll
      for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(a_frag[i], &a_tile[warp_m + 16 * i][kk], kLdA);
#pragma unroll
      for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(b_frag[j], &b_tile[kk][warp_n + 16 * j], kLdB);
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], a_frag[i], b_frag[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(&c_tile[warp_m + 16 * i][warp_n + 16 * j], acc[i][j], kLdC, wmma::mem_row_major);
  __syncthreads();
  for (int e = tid; e < kTileM * kTileN; e += kF16Threads)
    t.store(t.m0 + e / kTileN, t.n0 + e % kTileN, c_tile[e / kTileN][e % kTileN]);
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
extern "C" __global__ void __launch_bounds__(tensoracle_plugins::kDcnv2F32Threads) tensoracle_dcnv2_gemm_f32(Dcnv2Geometry g, const float* weight,
                                                                           const float* bias, const float* columns,
                                                                           float* y) {
  tensoracle_plugins::gemm_f32(g, weight, bias, columns, y);
}
extern "C" __global__ void __launch_bounds__(tensoracle_plugins::kDcnv2F16Threads) tensoracle_dcnv2_gemm_f16(Dcnv2Geometry g, const __half* weight,
                                                                           const __half* bias, const __half* columns,
                                                                           __half* y) {
  tensoracle_plugins::gemm_f16(g, weight, bias, columns, y);
}
