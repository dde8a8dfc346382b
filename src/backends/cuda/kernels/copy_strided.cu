// The strided and tiled copy kernels (copy_strided.h); the geometry comes simplified from
// plan_strided_copy (copy_plan.h).
#include "backends/cuda/kernels/copy_plan.h"
#include "backends/cuda/kernels/copy_strided.h"
#include "backends/cuda/kernels/data_movement_storage.cuh"

namespace tensoracle::backends::cuda {

namespace {

template <typename Index>
struct CopyArgs {
  int rank;
  Index shape[StridedCopy::kMaxRank];
  Index in_stride[StridedCopy::kMaxRank];
  Index out_stride[StridedCopy::kMaxRank];
  Index in_offset, out_offset;
};

template <typename Index>
CopyArgs<Index> copy_args(const StridedCopy& c) {
  CopyArgs<Index> a{};
  a.rank = c.rank;
  for (int d = 0; d < c.rank; ++d) {
    a.shape[d] = static_cast<Index>(c.shape[d]);
    a.in_stride[d] = static_cast<Index>(c.in_stride[d]);
    a.out_stride[d] = static_cast<Index>(c.out_stride[d]);
  }
  a.in_offset = static_cast<Index>(c.in_offset);
  a.out_offset = static_cast<Index>(c.out_offset);
  return a;
}

template <typename W, typename Index>
__global__ void strided_copy_kernel(const W* __restrict__ in, W* __restrict__ out, CopyArgs<Index> a, Index count) {
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<Index>(gridDim.x) * blockDim.x) {
    Index rest = i, src = a.in_offset, dst = a.out_offset;
    for (int d = a.rank - 1; d >= 0; --d) {
      const Index c = rest % a.shape[d];
      rest /= a.shape[d];
      src += c * a.in_stride[d];
      dst += c * a.out_stride[d];
    }
    out[dst] = in[src];
  }
}

// The 16-byte chunk copy (chunk_copy_applies): rows of `inner` contiguous uint4 chunks, the outer
// dims listed innermost first. 32-bit indices; dividers instead of integer division.
struct ChunkArgs {
  int outer_rank;
  FastDivider inner;
  FastDivider outer[StridedCopy::kMaxRank];
  int32_t outer_in[StridedCopy::kMaxRank];
  int32_t outer_out[StridedCopy::kMaxRank];
  int32_t in_offset, out_offset;
  int32_t count;
};

ChunkArgs chunk_args(const CopyPlan& p) {
  const StridedCopy& c = p.copy;
  ChunkArgs a{};
  a.outer_rank = c.rank - 1;
  a.inner = FastDivider(static_cast<uint32_t>(c.shape[c.rank - 1]));
  for (int k = 0; k < a.outer_rank; ++k) {
    const int d = c.rank - 2 - k;
    a.outer[k] = FastDivider(static_cast<uint32_t>(c.shape[d]));
    a.outer_in[k] = static_cast<int32_t>(c.in_stride[d]);
    a.outer_out[k] = static_cast<int32_t>(c.out_stride[d]);
  }
  a.in_offset = static_cast<int32_t>(c.in_offset);
  a.out_offset = static_cast<int32_t>(c.out_offset);
  a.count = static_cast<int32_t>(p.count);
  return a;
}

// Chunks in flight per thread: loads are all issued before the first store.
constexpr int kChunkUnroll = 4;
constexpr int kChunkThreads = 256;

__device__ __forceinline__ void chunk_offsets(const ChunkArgs& a, int32_t i, int32_t& src, int32_t& dst) {
  uint32_t q = a.inner.divide(static_cast<uint32_t>(i));
  const int32_t col = i - static_cast<int32_t>(q * a.inner.divisor);
  src = a.in_offset + col;
  dst = a.out_offset + col;
#pragma unroll
  for (int k = 0; k < StridedCopy::kMaxRank - 1; ++k) {
    if (k >= a.outer_rank) break;
    uint32_t coord = q;  // the outermost dim needs no division: i < count
    if (k + 1 < a.outer_rank) {
      const uint32_t next = a.outer[k].divide(q);
      coord = q - next * a.outer[k].divisor;
      q = next;
    }
    src += static_cast<int32_t>(coord) * a.outer_in[k];
    dst += static_cast<int32_t>(coord) * a.outer_out[k];
  }
}

__global__ void chunk_copy_kernel(const uint4* __restrict__ in, uint4* __restrict__ out, ChunkArgs a) {
  const int32_t step = static_cast<int32_t>(gridDim.x * blockDim.x);
  for (int32_t base = static_cast<int32_t>(blockIdx.x * blockDim.x + threadIdx.x); base < a.count;
       base += kChunkUnroll * step) {
    uint4 v[kChunkUnroll];
    int32_t dst[kChunkUnroll];
#pragma unroll
    for (int k = 0; k < kChunkUnroll; ++k) {
      const int32_t i = base + k * step;
      v[k] = make_uint4(0, 0, 0, 0);
      dst[k] = 0;
      if (i < a.count) {
        int32_t src = 0;
        chunk_offsets(a, i, src, dst[k]);
        v[k] = in[src];
      }
    }
#pragma unroll
    for (int k = 0; k < kChunkUnroll; ++k)
      if (base + k * step < a.count) out[dst[k]] = v[k];
  }
}

constexpr int kTile = 32;
constexpr int kTileRows = 8;  // threads per block: kTile x kTileRows

// Dims a (contiguous in the output) and b (contiguous in the input) are moved through a shared
// tile, read along b and written along a; the remaining dims form the batch.
template <typename Index>
struct TiledArgs {
  Index size_a, size_b, in_stride_a, out_stride_b;
  int batch_rank;
  Index batch_shape[StridedCopy::kMaxRank];
  Index batch_in[StridedCopy::kMaxRank];
  Index batch_out[StridedCopy::kMaxRank];
  Index in_offset, out_offset;
  Index tiles_a, tiles_b, tiles;
};

template <typename W, typename Index>
__global__ void tiled_copy_kernel(const W* __restrict__ in, W* __restrict__ out, TiledArgs<Index> a) {
  __shared__ W tile[kTile][kTile + 1];
  for (Index t = blockIdx.x; t < a.tiles; t += gridDim.x) {
    const Index tb = t % a.tiles_b;
    Index rest = t / a.tiles_b;
    const Index ta = rest % a.tiles_a;
    rest /= a.tiles_a;
    Index src = a.in_offset, dst = a.out_offset;
    for (int d = a.batch_rank - 1; d >= 0; --d) {
      const Index c = rest % a.batch_shape[d];
      rest /= a.batch_shape[d];
      src += c * a.batch_in[d];
      dst += c * a.batch_out[d];
    }
    const Index a0 = ta * kTile, b0 = tb * kTile;
    for (int j = threadIdx.y; j < kTile; j += kTileRows) {
      const Index ia = a0 + j, ib = b0 + threadIdx.x;
      if (ia < a.size_a && ib < a.size_b) tile[j][threadIdx.x] = in[src + ia * a.in_stride_a + ib];
    }
    __syncthreads();
    for (int j = threadIdx.y; j < kTile; j += kTileRows) {
      const Index ib = b0 + j, ia = a0 + threadIdx.x;
      if (ia < a.size_a && ib < a.size_b) out[dst + ib * a.out_stride_b + ia] = tile[threadIdx.x][j];
    }
    __syncthreads();
  }
}

template <typename Index>
TiledArgs<Index> tiled_args(const CopyPlan& p) {
  const StridedCopy& c = p.copy;
  TiledArgs<Index> a{};
  a.size_a = static_cast<Index>(c.shape[p.tile_out]);
  a.size_b = static_cast<Index>(c.shape[p.tile_in]);
  a.in_stride_a = static_cast<Index>(c.in_stride[p.tile_out]);
  a.out_stride_b = static_cast<Index>(c.out_stride[p.tile_in]);
  a.in_offset = static_cast<Index>(c.in_offset);
  a.out_offset = static_cast<Index>(c.out_offset);
  Index batch = 1;
  for (int d = 0; d < c.rank; ++d) {
    if (d == p.tile_out || d == p.tile_in) continue;
    a.batch_shape[a.batch_rank] = static_cast<Index>(c.shape[d]);
    a.batch_in[a.batch_rank] = static_cast<Index>(c.in_stride[d]);
    a.batch_out[a.batch_rank] = static_cast<Index>(c.out_stride[d]);
    ++a.batch_rank;
    batch *= static_cast<Index>(c.shape[d]);
  }
  a.tiles_a = (a.size_a + kTile - 1) / kTile;
  a.tiles_b = (a.size_b + kTile - 1) / kTile;
  a.tiles = a.tiles_a * a.tiles_b * batch;
  return a;
}

template <typename W, typename Index>
void launch(const CopyPlan& p, const void* in, void* out, bool tiled, cudaStream_t stream) {
  const W* src = static_cast<const W*>(in);
  W* dst = static_cast<W*>(out);
  if (tiled) {
    const TiledArgs<Index> args = tiled_args<Index>(p);
    const int64_t blocks = static_cast<int64_t>(args.tiles);
    tiled_copy_kernel<W, Index><<<grid_blocks(blocks, 1), dim3(kTile, kTileRows), 0, stream>>>(src, dst, args);
  } else {
    constexpr int kThreads = 256;
    strided_copy_kernel<W, Index>
        <<<grid_blocks(p.count, kThreads), kThreads, 0, stream>>>(src, dst, copy_args<Index>(p.copy), static_cast<Index>(p.count));
  }
}

template <typename Index>
void launch_sized(const CopyPlan& p, const void* in, void* out, bool tiled, cudaStream_t stream) {
  switch (p.word_size) {
    case 1: return launch<Word<1>, Index>(p, in, out, tiled, stream);
    case 2: return launch<Word<2>, Index>(p, in, out, tiled, stream);
    case 4: return launch<Word<4>, Index>(p, in, out, tiled, stream);
    case 8: return launch<Word<8>, Index>(p, in, out, tiled, stream);
    default: return launch<Word<16>, Index>(p, in, out, tiled, stream);
  }
}

void launch_chunks(const CopyPlan& p, const void* in, void* out, cudaStream_t stream) {
  constexpr int64_t kPerBlock = int64_t{kChunkThreads} * kChunkUnroll;
  chunk_copy_kernel<<<grid_blocks((p.count + kPerBlock - 1) / kPerBlock, 1), kChunkThreads, 0, stream>>>(
      static_cast<const uint4*>(in), static_cast<uint4*>(out), chunk_args(p));
}

}  // namespace

cudaError_t launch_strided_copy(const void* in, void* out, size_t element_size, const StridedCopy& copy,
                                CopyKernel kernel, cudaStream_t stream) {
  if (element_size != 1 && element_size != 2 && element_size != 4 && element_size != 8) return cudaErrorInvalidValue;
  const CopyPlan plan = plan_strided_copy(copy, element_size, in, out);
  if (plan.count == 0) return cudaSuccess;
  bool tiled = tiled_copy_applies(plan) && kernel != CopyKernel::kStrided;
  // Auto: a tile mostly idle (a dim shorter than half a tile) is slower than the strided walk.
  if (tiled && kernel == CopyKernel::kAuto)
    tiled = plan.copy.shape[plan.tile_out] >= kTile / 2 && plan.copy.shape[plan.tile_in] >= kTile / 2;
  // The tiled kernel never competes with the chunk copy: it needs an input-strided innermost dim.
  if (!tiled && chunk_copy_applies(plan)) launch_chunks(plan, in, out, stream);
  else if (plan.fits_int32) launch_sized<int32_t>(plan, in, out, tiled, stream);
  else launch_sized<int64_t>(plan, in, out, tiled, stream);
  return cudaGetLastError();
}

}  // namespace tensoracle::backends::cuda
