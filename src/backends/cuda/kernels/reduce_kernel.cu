#include "backends/cuda/kernels/pointwise_device.cuh"
#include "backends/cuda/kernels/reduce_kernel.h"

namespace tensoracle::backends::cuda {

namespace {

template <typename A>
__device__ __forceinline__ A quiet_nan() {
  return static_cast<A>(__longlong_as_double(0x7FF8000000000000LL));
}

template <typename A>
__device__ __forceinline__ A identity(ReduceOp op) {
  switch (op) {
    case ReduceOp::kProd: return A(1);
    case ReduceOp::kMax: return static_cast<A>(-INFINITY);
    case ReduceOp::kMin: return static_cast<A>(INFINITY);
    default: return A(0);
  }
}

template <typename A>
__device__ __forceinline__ A combine(ReduceOp op, A a, A b) {
  switch (op) {
    case ReduceOp::kProd: return a * b;
    case ReduceOp::kMax: return a != a || b != b ? quiet_nan<A>() : (a < b ? b : a);
    case ReduceOp::kMin: return a != a || b != b ? quiet_nan<A>() : (b < a ? b : a);
    default: return a + b;
  }
}

// One thread's share: a compensated sum for sum and mean, the plain reduction otherwise.
template <typename A>
struct Partial {
  A value, carry = A(0);
  __device__ explicit Partial(ReduceOp op) : value(identity<A>(op)) {}
  __device__ __forceinline__ void add(ReduceOp op, A v) {
    if (op == ReduceOp::kSum || op == ReduceOp::kMean) {
      const A y = v - carry;
      const A t = value + y;
      if (isfinite(t)) carry = (t - value) - y;  // once infinite, the sum stays what plain addition gives
      value = t;
    } else {
      value = combine(op, value, v);
    }
  }
  __device__ __forceinline__ A result() const { return isfinite(value) ? value - carry : value; }
};

__device__ __forceinline__ int64_t offset_of(int64_t index, int rank, const int64_t* shape, const int64_t* stride) {
  int64_t offset = 0;
  for (int d = rank - 1; d >= 0; --d) {
    offset += (index % shape[d]) * stride[d];
    index /= shape[d];
  }
  return offset;
}

template <typename A>
__device__ __forceinline__ void finish(void* y, int64_t o, const ReduceArgs& a, A acc) {
  if (a.op == ReduceOp::kMean) acc = acc / static_cast<A>(a.count);  // 0 / 0: NaN, as the reference
  device::store<A>(y, o, a.type, device::round_to<A>(acc, a.type));
}

template <typename A>
__device__ __forceinline__ A warp_combine(ReduceOp op, A v) {
  for (int offset = 16; offset > 0; offset >>= 1) v = combine(op, v, __shfl_xor_sync(0xFFFFFFFFu, v, offset));
  return v;
}

// A warp (kWarp) or a block per output; its threads take every group-size-th reduced element.
template <typename A, bool kWarp>
__global__ void __launch_bounds__(512) reduce_rows(const void* __restrict__ x, void* __restrict__ y,
                                                   const __grid_constant__ ReduceArgs a) {
  __shared__ A scratch[32];
  const device::RowGroup<kWarp> group;
  const int t = group.rank(), g = group.size();
  const bool flat = a.reduced_rank == 1;
  for (int64_t o = group.first_row(); o < a.outputs; o += group.row_step()) {
    const int64_t base = offset_of(o, a.kept_rank, a.kept_shape, a.kept_stride);
    Partial<A> p(a.op);
    for (int64_t r = t; r < a.count; r += g) {
      const int64_t at = base + (flat ? r * a.reduced_stride[0] : offset_of(r, a.reduced_rank, a.reduced_shape, a.reduced_stride));
      p.add(a.op, device::load<A>(x, at, a.type));
    }
    A v = warp_combine(a.op, p.result());
    if (!kWarp) {
      const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
      if (lane == 0) scratch[warp] = v;
      __syncthreads();
      v = lane < warps ? scratch[lane] : identity<A>(a.op);
      v = warp_combine(a.op, v);
      __syncthreads();
    }
    if (t == 0) finish(y, o, a, v);
  }
}

constexpr int kColumnTile = 32, kColumnSplit = 8;

// blockDim (32, 8): threadIdx.x picks the output of the tile, threadIdx.y a slice of the
// reduced range; the 8 partials of each output meet in shared memory.
template <typename A>
__global__ void __launch_bounds__(kColumnTile* kColumnSplit) reduce_columns(const void* __restrict__ x,
                                                                            void* __restrict__ y,
                                                                            const __grid_constant__ ReduceArgs a) {
  __shared__ A partial[kColumnSplit][kColumnTile];
  const bool flat = a.reduced_rank == 1;
  const int64_t tiles = (a.outputs + kColumnTile - 1) / kColumnTile;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t o = tile * kColumnTile + threadIdx.x;
    Partial<A> p(a.op);
    if (o < a.outputs) {
      const int64_t base = offset_of(o, a.kept_rank, a.kept_shape, a.kept_stride);
      for (int64_t r = threadIdx.y; r < a.count; r += kColumnSplit) {
        const int64_t at =
            base + (flat ? r * a.reduced_stride[0] : offset_of(r, a.reduced_rank, a.reduced_shape, a.reduced_stride));
        p.add(a.op, device::load<A>(x, at, a.type));
      }
    }
    partial[threadIdx.y][threadIdx.x] = p.result();
    __syncthreads();
    if (threadIdx.y == 0 && o < a.outputs) {
      A v = partial[0][threadIdx.x];
      for (int s = 1; s < kColumnSplit; ++s) v = combine(a.op, v, partial[s][threadIdx.x]);
      finish(y, o, a, v);
    }
    __syncthreads();
  }
}

template <typename A>
void launch_typed(const void* x, void* y, const ReduceArgs& a, ReduceShape shape, cudaStream_t stream) {
  if (shape == ReduceShape::kColumns) {
    const unsigned blocks = device::grid_for(a.outputs, kColumnTile);
    reduce_columns<A><<<blocks, dim3(kColumnTile, kColumnSplit), 0, stream>>>(x, y, a);
  } else if (a.count <= 2048) {
    constexpr int kThreads = 128;  // four outputs per block
    reduce_rows<A, true><<<device::grid_for(a.outputs, kThreads / 32), kThreads, 0, stream>>>(x, y, a);
  } else {
    const int threads = a.count <= 16384 ? 256 : 512;
    reduce_rows<A, false><<<device::grid_for(a.outputs, 1), threads, 0, stream>>>(x, y, a);
  }
}

}  // namespace

ReduceShape reduce_shape_for(const ReduceArgs& args) {
  if (args.reduced_rank == 0) return ReduceShape::kColumns;
  const bool reduced_inner = args.reduced_stride[args.reduced_rank - 1] == 1;
  return reduced_inner ? ReduceShape::kRows : ReduceShape::kColumns;
}

cudaError_t launch_reduce(const void* x, void* y, const ReduceArgs& args, ReduceShape shape, cudaStream_t stream) {
  if (args.outputs == 0) return cudaSuccess;
  const bool floating = args.type == DataType::kFloat32 || args.type == DataType::kFloat16 || args.type == DataType::kBFloat16;
  const bool wide = !floating || args.op == ReduceOp::kProd;
  if (!floating && args.type != DataType::kInt32 && args.type != DataType::kInt64) return cudaErrorInvalidValue;
  if (wide) launch_typed<double>(x, y, args, shape, stream);
  else launch_typed<float>(x, y, args, shape, stream);
  return cudaGetLastError();
}

}  // namespace tensoracle::backends::cuda
