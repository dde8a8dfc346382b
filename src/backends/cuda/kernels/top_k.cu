#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <climits>

#include "backends/cuda/kernels/data_movement_storage.cuh"
#include "backends/cuda/kernels/top_k.h"

namespace tensoracle::backends::cuda {

namespace {

__device__ __forceinline__ uint32_t float_order_key(float v) {
  if (isnan(v)) return 0xFFFFFFFFu;
  if (v == 0.0f) v = 0.0f;  // -0 sorts as +0 (they compare equal)
  const uint32_t bits = __float_as_uint(v);
  return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}

template <typename T>
struct OrderKey;
template <>
struct OrderKey<float> {
  using Key = uint32_t;
  static __device__ Key of(float v) { return float_order_key(v); }
};
template <>
struct OrderKey<__half> {
  using Key = uint32_t;
  static __device__ Key of(__half v) { return float_order_key(__half2float(v)); }
};
template <>
struct OrderKey<__nv_bfloat16> {
  using Key = uint32_t;
  static __device__ Key of(__nv_bfloat16 v) { return float_order_key(__bfloat162float(v)); }
};
template <>
struct OrderKey<int32_t> {
  using Key = uint32_t;
  static __device__ Key of(int32_t v) { return static_cast<uint32_t>(v) ^ 0x80000000u; }
};
template <>
struct OrderKey<int64_t> {
  using Key = unsigned long long;
  static __device__ Key of(int64_t v) { return static_cast<unsigned long long>(v) ^ (1ull << 63); }
};

template <typename Key>
__device__ __forceinline__ bool pair_less(Key ka, int32_t ia, Key kb, int32_t ib) {
  return ka < kb || (ka == kb && ia < ib);
}

template <typename T>
__global__ void top_k_kernel(const T* __restrict__ in, T* __restrict__ values, int64_t* __restrict__ indices,
                             TopKArgs a, int64_t length, unsigned char* workspace) {
  using Key = typename OrderKey<T>::Key;
  extern __shared__ __align__(16) unsigned char shared[];
  unsigned char* base = workspace ? workspace + static_cast<size_t>(blockIdx.x) * length * (sizeof(Key) + 4) : shared;
  Key* keys = reinterpret_cast<Key*>(base);
  int32_t* idx = reinterpret_cast<int32_t*>(keys + length);
  const int64_t lines = a.outer * a.inner;
  for (int64_t line = blockIdx.x; line < lines; line += gridDim.x) {
    const int64_t o = line / a.inner, i = line % a.inner;
    const T* src = in + o * a.size * a.inner + i;
    for (int64_t j = threadIdx.x; j < length; j += blockDim.x) {
      if (j < a.size) {
        const Key key = OrderKey<T>::of(src[j * a.inner]);
        keys[j] = a.largest ? static_cast<Key>(~key) : key;
        idx[j] = static_cast<int32_t>(j);
      } else {  // padding sorts after every element
        keys[j] = static_cast<Key>(~Key{0});
        idx[j] = INT_MAX;
      }
    }
    __syncthreads();
    // Bitonic sort, ascending by (key, index): pair p of a stage compares t and t | j, where t is
    // p with a zero bit inserted at j's position.
    for (int64_t span = 2; span <= length; span <<= 1) {
      for (int64_t j = span >> 1; j > 0; j >>= 1) {
        for (int64_t p = threadIdx.x; p < length / 2; p += blockDim.x) {
          const int64_t t = ((p & ~(j - 1)) << 1) | (p & (j - 1)), u = t | j;
          const bool ascending = (t & span) == 0;
          if (pair_less(keys[u], idx[u], keys[t], idx[t]) == ascending) {
            const Key k = keys[t];
            keys[t] = keys[u];
            keys[u] = k;
            const int32_t x = idx[t];
            idx[t] = idx[u];
            idx[u] = x;
          }
        }
        __syncthreads();
      }
    }
    for (int64_t j = threadIdx.x; j < a.k; j += blockDim.x) {
      const int64_t at = (o * a.k + j) * a.inner + i;
      values[at] = src[static_cast<int64_t>(idx[j]) * a.inner];
      indices[at] = idx[j];
    }
    __syncthreads();
  }
}

size_t key_bytes(DataType type) { return type == DataType::kInt64 ? 8 : 4; }

int threads_for(int64_t length) {
  const int64_t pairs = length / 2;
  return static_cast<int>(pairs >= 1024 ? 1024 : (pairs <= 32 ? 32 : pairs));
}

template <typename T>
cudaError_t launch_typed(const void* in, void* values, int64_t* indices, const TopKArgs& a, const TopKPlan& plan,
                         void* workspace, cudaStream_t stream) {
  top_k_kernel<T><<<static_cast<unsigned>(plan.blocks), threads_for(plan.sort_length), plan.in_shared ? plan.shared_bytes : 0,
                    stream>>>(static_cast<const T*>(in), static_cast<T*>(values), indices, a, plan.sort_length,
                              plan.in_shared ? nullptr : static_cast<unsigned char*>(workspace));
  return cudaGetLastError();
}

template <typename T>
cudaError_t prepare_typed(const TopKPlan& plan) {
  if (!plan.in_shared) return cudaSuccess;
  return cudaFuncSetAttribute(top_k_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(plan.shared_bytes));
}

}  // namespace

bool top_k_supports(DataType type) {
  return type == DataType::kFloat32 || type == DataType::kFloat16 || type == DataType::kBFloat16 ||
         type == DataType::kInt32 || type == DataType::kInt64;
}

TopKPlan plan_top_k(DataType type, const TopKArgs& args) {
  TopKPlan plan;
  while (plan.sort_length < args.size) plan.sort_length <<= 1;
  const size_t pair_bytes = key_bytes(type) + 4;
  const size_t bytes = static_cast<size_t>(plan.sort_length) * pair_bytes;
  const int64_t lines = args.outer * args.inner;
  plan.in_shared = bytes <= kTopKSharedLimit;
  if (plan.in_shared) {
    plan.shared_bytes = bytes;
    plan.blocks = lines < 65535 * 4 ? (lines < 1 ? 1 : lines) : 65535 * 4;
  } else {
    // Long lines: a bounded number of blocks, each sorting in its own slice of the workspace.
    constexpr int64_t kGlobalBlocks = 64;
    plan.blocks = lines < kGlobalBlocks ? (lines < 1 ? 1 : lines) : kGlobalBlocks;
    plan.workspace_bytes = bytes * static_cast<size_t>(plan.blocks);
  }
  return plan;
}

cudaError_t prepare_top_k(DataType type, const TopKPlan& plan) {
  switch (type) {
    case DataType::kFloat32: return prepare_typed<float>(plan);
    case DataType::kFloat16: return prepare_typed<__half>(plan);
    case DataType::kBFloat16: return prepare_typed<__nv_bfloat16>(plan);
    case DataType::kInt32: return prepare_typed<int32_t>(plan);
    case DataType::kInt64: return prepare_typed<int64_t>(plan);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t launch_top_k(DataType type, const void* in, void* values, int64_t* indices, const TopKArgs& args,
                         const TopKPlan& plan, void* workspace, cudaStream_t stream) {
  if (args.outer * args.inner * args.k == 0) return cudaSuccess;
  switch (type) {
    case DataType::kFloat32: return launch_typed<float>(in, values, indices, args, plan, workspace, stream);
    case DataType::kFloat16: return launch_typed<__half>(in, values, indices, args, plan, workspace, stream);
    case DataType::kBFloat16: return launch_typed<__nv_bfloat16>(in, values, indices, args, plan, workspace, stream);
    case DataType::kInt32: return launch_typed<int32_t>(in, values, indices, args, plan, workspace, stream);
    case DataType::kInt64: return launch_typed<int64_t>(in, values, indices, args, plan, workspace, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace tensoracle::backends::cuda
