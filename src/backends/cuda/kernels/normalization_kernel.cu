#include "backends/cuda/kernels/normalization_kernel.h"
#include "backends/cuda/kernels/pointwise_device.cuh"

#include <type_traits>

namespace tensoracle::backends::cuda {

namespace {

using device::from_float;
using device::KahanSum;
using device::RowGroup;
using device::SumOp;
using device::to_float;

template <typename S>
__device__ __forceinline__ float affine(const NormArgs& a, int64_t row, int64_t i, float v) {
  int64_t p = i;
  if (a.groups) p = (row % a.groups) * a.channels_per_group + i / a.spatial;
  if (a.scale) v *= to_float(static_cast<const S*>(a.scale)[p]);
  if (a.bias) v += to_float(static_cast<const S*>(a.bias)[p]);
  return v;
}

// The quantized copy's scale (NormArgs::codes), read once by each thread.
__device__ __forceinline__ float copy_scale(const NormArgs& a) {
  return a.codes ? device::load<float>(a.code_scale, 0, a.code_scale_type) : 1.0f;
}

// Writes element i of y (flat), v rounded to S, and its code where the step writes a quantized
// copy: the code of the value as stored, as a quantize layer reading y would compute it.
template <typename S>
__device__ __forceinline__ void store_value(const NormArgs& a, S* y, int64_t i, float v, float code_scale) {
  const S r = from_float<S>(v);
  y[i] = r;
  if (a.codes) static_cast<uint8_t*>(a.codes)[i] = device::quantized_code(to_float(r) / code_scale, a.code_type);
}

// Warps are launched 128 threads per block (row_launch); blocks with up to 1024.
template <typename S, int kPer, bool kWarp>
__global__ void __launch_bounds__(kWarp ? 128 : 1024) norm_rows_cached(const S* __restrict__ x, S* __restrict__ y, NormArgs a) {
  __shared__ float scratch[32];
  const RowGroup<kWarp> group;
  const int t = group.rank(), g = group.size();
  const float n = static_cast<float>(a.size);
  const float code_scale = copy_scale(a);
  for (int64_t row = group.first_row(); row < a.rows; row += group.row_step()) {
    const S* in = x + row * a.size;
    // Values are held relative to the row's first element: with a large common offset
    // (activations around 1000 with unit spread) x - shift is exact, and neither the mean nor the
    // deviations ever pass through an fp32 number of the offset's size, whose rounding would
    // shift every output.
    const float shift = a.rms ? 0.0f : to_float(in[0]);
    float v[kPer];
    float sum = 0;
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const int i = t + j * g;  // a cached row has at most 16384 elements
      v[j] = i < a.size ? to_float(in[i]) - shift : 0.0f;
      sum += v[j];
    }
    float mean = 0;  // of v
    if (!a.rms) mean = group.reduce(sum, SumOp(), 0.0f, scratch) / n;
    float squares = 0;
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const int i = t + j * g;  // a cached row has at most 16384 elements
      const float d = v[j] - mean;
      if (i < a.size) squares += d * d;
    }
    const float var = group.reduce(squares, SumOp(), 0.0f, scratch) / n;
    const float inv = 1.0f / sqrtf(var + a.epsilon);
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const int i = t + j * g;  // a cached row has at most 16384 elements
      if (i < a.size) store_value<S>(a, y, row * a.size + i, affine<S>(a, row, i, (v[j] - mean) * inv), code_scale);
    }
  }
}

template <typename S>
__global__ void __launch_bounds__(1024) norm_rows_streamed(const S* __restrict__ x, S* __restrict__ y, NormArgs a) {
  __shared__ float scratch[32];
  const RowGroup<false> group;
  const int t = group.rank(), g = group.size();
  const float n = static_cast<float>(a.size);
  const float code_scale = copy_scale(a);
  for (int64_t row = group.first_row(); row < a.rows; row += group.row_step()) {
    const S* in = x + row * a.size;
    const float shift = a.rms ? 0.0f : to_float(in[0]);  // as in the cached kernel
    float mean = 0;                                       // of x - shift
    if (!a.rms) {
      KahanSum sum;
      for (int64_t i = t; i < a.size; i += g) sum.add(to_float(in[i]) - shift);
      mean = group.reduce(sum.total(), SumOp(), 0.0f, scratch) / n;
    }
    KahanSum squares;
    for (int64_t i = t; i < a.size; i += g) {
      const float d = (to_float(in[i]) - shift) - mean;
      squares.add(d * d);
    }
    const float var = group.reduce(squares.total(), SumOp(), 0.0f, scratch) / n;
    const float inv = 1.0f / sqrtf(var + a.epsilon);
    for (int64_t i = t; i < a.size; i += g)
      store_value<S>(a, y, row * a.size + i, affine<S>(a, row, i, ((to_float(in[i]) - shift) - mean) * inv), code_scale);
  }
}

// ---- the vector path: rows of whole 16-byte vectors, every pointer 16-byte aligned

constexpr int kVectorBytes = 16;

template <typename S>
constexpr int vector_width() {
  return kVectorBytes / static_cast<int>(sizeof(S));
}

// The most values a thread caches: as the scalar warp rows (32) and block rows (16).
template <bool kWarp>
constexpr int vector_cache_limit() {
  return kWarp ? 32 : 16;
}

template <typename S>
constexpr DataType data_type_of() {
  if constexpr (std::is_same_v<S, __half>) return DataType::kFloat16;
  else if constexpr (std::is_same_v<S, __nv_bfloat16>) return DataType::kBFloat16;
  else return DataType::kFloat32;
}

// One 16-byte vector of S, read and written whole.
template <typename S>
union Vector {
  uint4 raw;
  S e[vector_width<S>()];
};

// The codes of one vector of S (a quantized copy), written whole: 8 bytes for fp16 and bf16, 4
// for fp32.
template <int kWidth>
union CodeVector;
template <>
union CodeVector<8> {
  uint2 raw;
  uint8_t e[8];
};
template <>
union CodeVector<4> {
  uint32_t raw;
  uint8_t e[4];
};

// norm_rows_cached with each thread caching kVecs whole vectors: vector k of a row goes to
// thread k % g, so every load and store of a warp covers 512 contiguous bytes. The statistics
// are the cached kernel's (values relative to the row's first element, the mean, then the
// biased variance of the deviations, all in fp32); only the order of the per-thread sums differs.
template <typename S, int kVecs, bool kWarp>
__global__ void __launch_bounds__(kWarp ? 128 : 1024) norm_rows_vector(const S* __restrict__ x, S* __restrict__ y, NormArgs a) {
  constexpr int kWidth = vector_width<S>();
  __shared__ float scratch[32];
  const RowGroup<kWarp> group;
  const int t = group.rank(), g = group.size();
  const int vectors = static_cast<int>(a.size / kWidth);  // at most kVecs * g (the launcher checks)
  const float n = static_cast<float>(a.size);
  const uint4* scale = static_cast<const uint4*>(a.scale);
  const uint4* bias = static_cast<const uint4*>(a.bias);
  const float code_scale = copy_scale(a);
  for (int64_t row = group.first_row(); row < a.rows; row += group.row_step()) {
    const uint4* in = reinterpret_cast<const uint4*>(x + row * a.size);
    uint4* out = reinterpret_cast<uint4*>(y + row * a.size);
    Vector<S> loaded[kVecs];
#pragma unroll
    for (int j = 0; j < kVecs; ++j) {
      const int k = t + j * g;
      loaded[j].raw = k < vectors ? in[k] : make_uint4(0, 0, 0, 0);
    }
    const float shift = a.rms ? 0.0f : to_float(x[row * a.size]);  // see norm_rows_cached
    float v[kVecs][kWidth];
    float sum = 0;
#pragma unroll
    for (int j = 0; j < kVecs; ++j) {
      const bool valid = t + j * g < vectors;
#pragma unroll
      for (int e = 0; e < kWidth; ++e) {
        v[j][e] = valid ? to_float(loaded[j].e[e]) - shift : 0.0f;
        sum += v[j][e];
      }
    }
    float mean = 0;  // of v
    if (!a.rms) mean = group.reduce(sum, SumOp(), 0.0f, scratch) / n;
    float squares = 0;
#pragma unroll
    for (int j = 0; j < kVecs; ++j) {
      if (t + j * g >= vectors) continue;
#pragma unroll
      for (int e = 0; e < kWidth; ++e) {
        const float d = v[j][e] - mean;
        squares += d * d;
      }
    }
    const float var = group.reduce(squares, SumOp(), 0.0f, scratch) / n;
    const float inv = 1.0f / sqrtf(var + a.epsilon);
#pragma unroll
    for (int j = 0; j < kVecs; ++j) {
      const int k = t + j * g;
      if (k >= vectors) continue;
      Vector<S> s, b, result;
      CodeVector<kWidth> codes;
      if (scale) s.raw = scale[k];
      if (bias) b.raw = bias[k];
#pragma unroll
      for (int e = 0; e < kWidth; ++e) {
        float r = (v[j][e] - mean) * inv;  // then the affine map as affine() applies it
        if (scale) r *= to_float(s.e[e]);
        if (bias) r += to_float(b.e[e]);
        result.e[e] = from_float<S>(r);
        if (a.codes) codes.e[e] = device::quantized_code(to_float(result.e[e]) / code_scale, a.code_type);
      }
      out[k] = result.raw;
      if (a.codes) static_cast<decltype(codes.raw)*>(a.codes)[row * vectors + k] = codes.raw;
    }
  }
}

// Launches norm_rows_vector with `vecs` vectors per thread (norm_vectors_per_thread).
template <typename S, bool kWarp>
void launch_vector(const S* x, S* y, const NormArgs& a, const RowLaunch& r, int vecs, unsigned blocks,
                   cudaStream_t stream) {
  constexpr int kMaxVecs = vector_cache_limit<kWarp>() / vector_width<S>();
  switch (vecs) {
#define TO_NORM_VECTOR_CASE(n)                                                   \
  case n:                                                                        \
    if constexpr (n <= kMaxVecs)                                                 \
      norm_rows_vector<S, n, kWarp><<<blocks, r.threads, 0, stream>>>(x, y, a); \
    break;
    TO_NORM_VECTOR_CASE(1)
    TO_NORM_VECTOR_CASE(2)
    TO_NORM_VECTOR_CASE(3)
    TO_NORM_VECTOR_CASE(4)
    TO_NORM_VECTOR_CASE(5)
    TO_NORM_VECTOR_CASE(6)
    TO_NORM_VECTOR_CASE(7)
    TO_NORM_VECTOR_CASE(8)
#undef TO_NORM_VECTOR_CASE
    default: break;  // norm_vectors_per_thread returns no other count
  }
}

bool aligned_to_vector(const void* p) { return reinterpret_cast<uintptr_t>(p) % kVectorBytes == 0; }

template <typename S, bool kWarp>
void launch_cached(const S* x, S* y, const NormArgs& a, const RowLaunch& r, unsigned blocks, cudaStream_t stream) {
  switch (r.per_thread) {
// Block rows cache 4..16 values per thread (row_launch), so only warps instantiate the rest.
#define TO_NORM_CASE(n)                                                          \
  case n:                                                                        \
    if constexpr (kWarp || (n >= 4 && n <= 16))                                  \
      norm_rows_cached<S, n, kWarp><<<blocks, r.threads, 0, stream>>>(x, y, a); \
    break;
    TO_NORM_CASE(1)
    TO_NORM_CASE(2)
    TO_NORM_CASE(4)
    TO_NORM_CASE(8)
    TO_NORM_CASE(16)
    TO_NORM_CASE(32)
#undef TO_NORM_CASE
    default: norm_rows_streamed<S><<<blocks, r.threads, 0, stream>>>(x, y, a);
  }
}

template <typename S>
void launch_norm_typed(const void* xv, void* yv, const NormArgs& a, const RowLaunch& r, cudaStream_t stream) {
  const S* x = static_cast<const S*>(xv);
  S* y = static_cast<S*>(yv);
  const unsigned blocks = device::grid_for(a.rows, r.warp ? r.threads / 32 : 1);
  const int vecs = norm_vectors_per_thread(x, y, data_type_of<S>(), a, r);
  if (vecs > 0 && r.warp) launch_vector<S, true>(x, y, a, r, vecs, blocks, stream);
  else if (vecs > 0) launch_vector<S, false>(x, y, a, r, vecs, blocks, stream);
  else if (!r.warp && r.per_thread == 0) norm_rows_streamed<S><<<blocks, r.threads, 0, stream>>>(x, y, a);
  else if (r.warp) launch_cached<S, true>(x, y, a, r, blocks, stream);
  else launch_cached<S, false>(x, y, a, r, blocks, stream);
}

template <typename S>
__global__ void batch_norm_kernel(const S* __restrict__ x, S* __restrict__ y, BatchNormArgs a) {
  const S* scale = static_cast<const S*>(a.scale);
  const S* bias = static_cast<const S*>(a.bias);
  const S* mean = static_cast<const S*>(a.mean);
  const S* var = static_cast<const S*>(a.variance);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < a.count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c = (i / a.inner) % a.channels;
    const float inv = 1.0f / sqrtf(to_float(var[c]) + a.epsilon);
    y[i] = from_float<S>((to_float(x[i]) - to_float(mean[c])) * inv * to_float(scale[c]) + to_float(bias[c]));
  }
}

template <typename S>
void launch_batch_norm_typed(const void* x, void* y, const BatchNormArgs& a, cudaStream_t stream) {
  constexpr int kThreads = 256;
  batch_norm_kernel<S><<<device::grid_for(a.count, kThreads), kThreads, 0, stream>>>(static_cast<const S*>(x),
                                                                                     static_cast<S*>(y), a);
}

}  // namespace

int norm_vectors_per_thread(const void* x, const void* y, DataType type, const NormArgs& args, const RowLaunch& rows) {
  if (type != DataType::kFloat32 && type != DataType::kFloat16 && type != DataType::kBFloat16) return 0;
  const int64_t width = kVectorBytes / static_cast<int64_t>(data_type_size(type));
  if (args.groups || args.size <= 0 || args.size % width || !aligned_to_vector(x) || !aligned_to_vector(y) ||
      (args.scale && !aligned_to_vector(args.scale)) || (args.bias && !aligned_to_vector(args.bias)) ||
      (args.codes && reinterpret_cast<uintptr_t>(args.codes) % width))
    return 0;
  const int64_t threads_per_row = rows.warp ? 32 : rows.threads;
  const int64_t vecs = (args.size / width + threads_per_row - 1) / threads_per_row;
  const int64_t limit = (rows.warp ? vector_cache_limit<true>() : vector_cache_limit<false>()) / width;
  return vecs <= limit ? static_cast<int>(vecs) : 0;
}

cudaError_t launch_norm(const void* x, void* y, DataType type, const NormArgs& args, const RowLaunch& rows,
                        cudaStream_t stream) {
  if (args.rows == 0 || args.size == 0) return cudaSuccess;
  if (rows.threads % 32 || rows.threads > 1024 || (rows.warp && (rows.per_thread < 1 || rows.per_thread > 32)) ||
      (args.groups && (args.spatial <= 0 || args.channels_per_group <= 0)) ||
      (args.codes && (args.code_type != DataType::kInt8 && args.code_type != DataType::kFloat8E4M3)))
    return cudaErrorInvalidValue;
  switch (type) {
    case DataType::kFloat32: launch_norm_typed<float>(x, y, args, rows, stream); break;
    case DataType::kFloat16: launch_norm_typed<__half>(x, y, args, rows, stream); break;
    case DataType::kBFloat16: launch_norm_typed<__nv_bfloat16>(x, y, args, rows, stream); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_batch_norm(const void* x, void* y, DataType type, const BatchNormArgs& args, cudaStream_t stream) {
  if (args.count == 0) return cudaSuccess;
  if (args.channels <= 0 || args.inner <= 0) return cudaErrorInvalidValue;
  switch (type) {
    case DataType::kFloat32: launch_batch_norm_typed<float>(x, y, args, stream); break;
    case DataType::kFloat16: launch_batch_norm_typed<__half>(x, y, args, stream); break;
    case DataType::kBFloat16: launch_batch_norm_typed<__nv_bfloat16>(x, y, args, stream); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace tensoracle::backends::cuda
