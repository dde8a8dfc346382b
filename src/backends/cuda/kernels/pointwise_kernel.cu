// The pointwise kernels (pointwise_kernel.h): the interpreter and the vector kernel share
// evaluate() and round_to, so they compute the same bits.
//
// The interpreter: each thread reads its element of every input (through the merged
// geometry, so broadcasts and any layout work), runs the program on registers in the compute
// type and writes the result. Every operation is the CPU reference's (src/backends/cpu/
// elementwise.cpp, unary.cpp, shuffle.cpp select) evaluated in T, and every result is rounded
// to its instruction's type like the reference's round_to_type.
#include "backends/cuda/kernels/pointwise_device.cuh"
#include "backends/cuda/kernels/pointwise_kernel.h"

namespace tensoracle::backends::cuda {

namespace {

using device::load;
using device::round_to;
using device::store;

// Math in the compute type (float: the single-precision library functions, never fast-math).
struct F32 {
  using T = float;
  static __device__ __forceinline__ float exp(float x) { return expf(x); }
  static __device__ __forceinline__ float log(float x) { return logf(x); }
  static __device__ __forceinline__ float log1p(float x) { return log1pf(x); }
  static __device__ __forceinline__ float sqrt(float x) { return sqrtf(x); }
  static __device__ __forceinline__ float sin(float x) { return sinf(x); }
  static __device__ __forceinline__ float cos(float x) { return cosf(x); }
  static __device__ __forceinline__ float erf(float x) { return erff(x); }
  static __device__ __forceinline__ float tanh(float x) { return tanhf(x); }
  static __device__ __forceinline__ float floor(float x) { return floorf(x); }
  static __device__ __forceinline__ float ceil(float x) { return ceilf(x); }
  static __device__ __forceinline__ float rint(float x) { return rintf(x); }
  static __device__ __forceinline__ float trunc(float x) { return truncf(x); }
  static __device__ __forceinline__ float fabs(float x) { return fabsf(x); }
  static __device__ __forceinline__ float pow(float x, float y) { return powf(x, y); }
};
struct F64 {
  using T = double;
  static __device__ __forceinline__ double exp(double x) { return ::exp(x); }
  static __device__ __forceinline__ double log(double x) { return ::log(x); }
  static __device__ __forceinline__ double log1p(double x) { return ::log1p(x); }
  static __device__ __forceinline__ double sqrt(double x) { return ::sqrt(x); }
  static __device__ __forceinline__ double sin(double x) { return ::sin(x); }
  static __device__ __forceinline__ double cos(double x) { return ::cos(x); }
  static __device__ __forceinline__ double erf(double x) { return ::erf(x); }
  static __device__ __forceinline__ double tanh(double x) { return ::tanh(x); }
  static __device__ __forceinline__ double floor(double x) { return ::floor(x); }
  static __device__ __forceinline__ double ceil(double x) { return ::ceil(x); }
  static __device__ __forceinline__ double rint(double x) { return ::rint(x); }
  static __device__ __forceinline__ double trunc(double x) { return ::trunc(x); }
  static __device__ __forceinline__ double fabs(double x) { return ::fabs(x); }
  static __device__ __forceinline__ double pow(double x, double y) { return ::pow(x, y); }
};

// std::min(hi, std::max(lo, x)) as the reference writes it (x is not NaN).
template <typename T>
__device__ __forceinline__ T clamp(T x, T lo, T hi) {
  const T low = lo < x ? x : lo;
  return low < hi ? low : hi;
}

__device__ __forceinline__ bool is_integer_type(DataType t) {
  return t >= DataType::kInt8 && t <= DataType::kUInt64;
}

// r[l] = f(a[l], b[l], c[l]) for every lane l (lanes only ever meet their own lane, so r may be
// one of a, b, c).
template <typename T, int N, typename F>
__device__ __forceinline__ void lanes(const T (&a)[N], const T (&b)[N], const T (&c)[N], T (&r)[N], F f) {
#pragma unroll
  for (int l = 0; l < N; ++l) r[l] = f(a[l], b[l], c[l]);
}

// Instruction `in` on N lanes: decoded once, then applied lane by lane (N = 1 for the
// interpreter). The result is not yet rounded to in.type.
template <typename M, int N>
__device__ __forceinline__ void evaluate(const PointwiseKernelInstr& in, const typename M::T (&A)[N],
                                         const typename M::T (&B)[N], const typename M::T (&C)[N],
                                         typename M::T (&R)[N]) {
  using T = typename M::T;
  const T alpha = static_cast<T>(in.alpha), beta = static_cast<T>(in.beta);
  const T zero = T(0), one = T(1), half = T(0.5);
  const T nan = static_cast<T>(__longlong_as_double(0x7FF8000000000000LL));
  const bool integer = is_integer_type(in.type);
  switch (in.code) {
    case PointwiseCode::kAdd: return lanes(A, B, C, R, [&](T a, T b, T) { return a + b; });
    case PointwiseCode::kSub: return lanes(A, B, C, R, [&](T a, T b, T) { return a - b; });
    case PointwiseCode::kMul: return lanes(A, B, C, R, [&](T a, T b, T) { return a * b; });
    case PointwiseCode::kDiv:
      // Integer division truncates; x / 0 is 0.
      if (integer) return lanes(A, B, C, R, [&](T a, T b, T) { return b == zero ? zero : M::trunc(a / b); });
      return lanes(A, B, C, R, [&](T a, T b, T) { return a / b; });
    case PointwiseCode::kPow:
      // Integer powers must come out exact, so they take the correctly-behaved fp64 pow.
      if (integer)
        return lanes(A, B, C, R, [&](T a, T b, T) {
          return static_cast<T>(::pow(static_cast<double>(a), static_cast<double>(b)));
        });
      return lanes(A, B, C, R, [&](T a, T b, T) { return M::pow(a, b); });
    case PointwiseCode::kMax:
      return lanes(A, B, C, R, [&](T a, T b, T) { return a != a || b != b ? nan : (a < b ? b : a); });
    case PointwiseCode::kMin:
      return lanes(A, B, C, R, [&](T a, T b, T) { return a != a || b != b ? nan : (b < a ? b : a); });
    case PointwiseCode::kEqual: return lanes(A, B, C, R, [&](T a, T b, T) { return a == b ? one : zero; });
    case PointwiseCode::kLess: return lanes(A, B, C, R, [&](T a, T b, T) { return a < b ? one : zero; });
    case PointwiseCode::kGreater: return lanes(A, B, C, R, [&](T a, T b, T) { return a > b ? one : zero; });
    case PointwiseCode::kLessEqual: return lanes(A, B, C, R, [&](T a, T b, T) { return a <= b ? one : zero; });
    case PointwiseCode::kGreaterEqual: return lanes(A, B, C, R, [&](T a, T b, T) { return a >= b ? one : zero; });
    case PointwiseCode::kAnd:
      return lanes(A, B, C, R, [&](T a, T b, T) { return a != zero && b != zero ? one : zero; });
    case PointwiseCode::kOr:
      return lanes(A, B, C, R, [&](T a, T b, T) { return a != zero || b != zero ? one : zero; });
    case PointwiseCode::kExp: return lanes(A, B, C, R, [&](T a, T, T) { return M::exp(a); });
    case PointwiseCode::kLog: return lanes(A, B, C, R, [&](T a, T, T) { return M::log(a); });
    case PointwiseCode::kSqrt: return lanes(A, B, C, R, [&](T a, T, T) { return M::sqrt(a); });
    case PointwiseCode::kRsqrt: return lanes(A, B, C, R, [&](T a, T, T) { return one / M::sqrt(a); });
    case PointwiseCode::kRecip: return lanes(A, B, C, R, [&](T a, T, T) { return one / a; });
    case PointwiseCode::kAbs: return lanes(A, B, C, R, [&](T a, T, T) { return M::fabs(a); });
    case PointwiseCode::kNeg: return lanes(A, B, C, R, [&](T a, T, T) { return -a; });
    case PointwiseCode::kSin: return lanes(A, B, C, R, [&](T a, T, T) { return M::sin(a); });
    case PointwiseCode::kCos: return lanes(A, B, C, R, [&](T a, T, T) { return M::cos(a); });
    case PointwiseCode::kErf: return lanes(A, B, C, R, [&](T a, T, T) { return M::erf(a); });
    case PointwiseCode::kFloor: return lanes(A, B, C, R, [&](T a, T, T) { return M::floor(a); });
    case PointwiseCode::kCeil: return lanes(A, B, C, R, [&](T a, T, T) { return M::ceil(a); });
    case PointwiseCode::kRound: return lanes(A, B, C, R, [&](T a, T, T) { return M::rint(a); });  // halves to even
    case PointwiseCode::kRelu: return lanes(A, B, C, R, [&](T a, T, T) { return a < zero ? zero : a; });
    case PointwiseCode::kLeakyRelu: return lanes(A, B, C, R, [&](T a, T, T) { return a < zero ? alpha * a : a; });
    case PointwiseCode::kSigmoid: return lanes(A, B, C, R, [&](T a, T, T) { return one / (one + M::exp(-a)); });
    case PointwiseCode::kTanh: return lanes(A, B, C, R, [&](T a, T, T) { return M::tanh(a); });
    case PointwiseCode::kGeluErf:
      return lanes(A, B, C, R, [&](T a, T, T) { return half * a * (one + M::erf(a * T(0.70710678118654752440))); });
    case PointwiseCode::kGeluTanh:
      return lanes(A, B, C, R, [&](T a, T, T) {
        return half * a * (one + M::tanh(T(0.79788456080286535588) * (a + T(0.044715) * a * a * a)));
      });
    case PointwiseCode::kSilu: return lanes(A, B, C, R, [&](T a, T, T) { return a * (one / (one + M::exp(-a))); });
    case PointwiseCode::kSoftplus:
      return lanes(A, B, C, R, [&](T a, T, T) {
        const T ax = alpha * a;  // log(1 + e^ax) without overflow
        return (ax > zero ? ax + M::log1p(M::exp(-ax)) : M::log1p(M::exp(ax))) / alpha;
      });
    case PointwiseCode::kClip: return lanes(A, B, C, R, [&](T a, T, T) { return a != a ? a : clamp(a, alpha, beta); });
    case PointwiseCode::kHardSigmoid:
      return lanes(A, B, C, R, [&](T a, T, T) { return a != a ? a : clamp(alpha * a + beta, zero, one); });
    case PointwiseCode::kHardSwish:
      return lanes(A, B, C, R, [&](T a, T, T) { return a != a ? a : a * clamp(alpha * a + beta, zero, one); });
    case PointwiseCode::kSelect: return lanes(A, B, C, R, [&](T a, T b, T c) { return a != zero ? b : c; });
    case PointwiseCode::kCast: return lanes(A, B, C, R, [&](T a, T, T) { return a; });
  }
  return lanes(A, B, C, R, [&](T, T, T) { return nan; });
}

// Every lane rounded to `type` (round_to, with the type switch decoded once).
template <int N>
__device__ __forceinline__ void round_lanes(float (&r)[N], DataType type) {
#define TO_ROUND_LANES(t)                                      \
  case DataType::t:                                            \
    _Pragma("unroll") for (int l = 0; l < N; ++l) r[l] = round_to<float>(r[l], DataType::t); \
    return;
  switch (type) {
    TO_ROUND_LANES(kFloat32)
    TO_ROUND_LANES(kFloat16)
    TO_ROUND_LANES(kBFloat16)
    TO_ROUND_LANES(kFloat8E4M3)
    TO_ROUND_LANES(kFloat8E5M2)
    TO_ROUND_LANES(kFloat64)
    TO_ROUND_LANES(kInt8)
    TO_ROUND_LANES(kUInt8)
    TO_ROUND_LANES(kInt16)
    TO_ROUND_LANES(kUInt16)
    TO_ROUND_LANES(kInt32)
    TO_ROUND_LANES(kUInt32)
    TO_ROUND_LANES(kInt64)
    TO_ROUND_LANES(kUInt64)
    TO_ROUND_LANES(kBool)
  }
#undef TO_ROUND_LANES
}

// kFlat: rank <= 1, so the offset of element i in tensor k is i * stride (no index division).
template <typename M, bool kFlat>
__global__ void __launch_bounds__(512) pointwise_kernel(const __grid_constant__ PointwiseKernelArgs args) {
  using T = typename M::T;
  T reg[kMaxPointwiseInputs + kMaxPointwiseInstrs];
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < args.count; i += step) {
    int64_t out_offset;
    if (kFlat) {
      out_offset = args.rank ? i * args.out_stride[0] : 0;
      for (int k = 0; k < args.num_inputs; ++k)
        reg[k] = load<T>(args.in[k], args.rank ? i * args.in_stride[k][0] : 0, args.in_type[k]);
    } else {
      int64_t coord[kMaxPointwiseRank];
      int64_t rest = i;
      out_offset = 0;
      for (int d = args.rank - 1; d >= 0; --d) {
        coord[d] = rest % args.shape[d];
        rest /= args.shape[d];
        out_offset += coord[d] * args.out_stride[d];
      }
      for (int k = 0; k < args.num_inputs; ++k) {
        int64_t offset = 0;
        for (int d = 0; d < args.rank; ++d) offset += coord[d] * args.in_stride[k][d];
        reg[k] = load<T>(args.in[k], offset, args.in_type[k]);
      }
    }
    for (int n = 0; n < args.num_instrs; ++n) {
      const PointwiseKernelInstr& in = args.instrs[n];
      const T a[1] = {reg[in.a]}, b[1] = {reg[in.b]}, c[1] = {reg[in.c]};
      T r[1];
      evaluate<M, 1>(in, a, b, c, r);
      reg[args.num_inputs + n] = round_to<T>(r[0], in.type);
    }
    store<T>(args.out, out_offset, args.out_type, reg[args.num_inputs + args.num_instrs - 1]);
  }
}

// ---- the vector kernel (fp32 compute; S: the storage type of every input and of the output)

template <typename S>
struct Lanes {
  static constexpr int kWidth = 16 / static_cast<int>(sizeof(S));  // elements in 16 bytes
};

// Storage values as the bits of 32-bit words (2-byte types two to a word, low half first).
template <typename S>
__device__ __forceinline__ S from_bits(uint32_t bits);
template <>
__device__ __forceinline__ float from_bits<float>(uint32_t bits) { return __uint_as_float(bits); }
template <>
__device__ __forceinline__ __half from_bits<__half>(uint32_t bits) {
  return __ushort_as_half(static_cast<unsigned short>(bits));
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_bits<__nv_bfloat16>(uint32_t bits) {
  return __ushort_as_bfloat16(static_cast<unsigned short>(bits));
}
__device__ __forceinline__ uint32_t to_bits(float v) { return __float_as_uint(v); }
__device__ __forceinline__ uint32_t to_bits(__half v) { return __half_as_ushort(v); }
__device__ __forceinline__ uint32_t to_bits(__nv_bfloat16 v) { return __bfloat16_as_ushort(v); }

// Elements 0 .. N - 1 of `p` (16-byte aligned), one 16-byte load.
template <typename S, int N>
__device__ __forceinline__ void load_lanes(const S* p, float (&v)[N]) {
  static_assert(N * sizeof(S) == 16, "one 16-byte access");
  constexpr int kPerWord = 4 / static_cast<int>(sizeof(S)), kBits = 8 * static_cast<int>(sizeof(S));
  const uint4 raw = *reinterpret_cast<const uint4*>(p);
  const uint32_t words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
  for (int l = 0; l < N; ++l) v[l] = device::to_float<S>(from_bits<S>(words[l / kPerWord] >> (kBits * (l % kPerWord))));
}

template <typename S, int N>
__device__ __forceinline__ void store_lanes(S* p, const float (&v)[N]) {
  constexpr int kPerWord = 4 / static_cast<int>(sizeof(S)), kBits = 8 * static_cast<int>(sizeof(S));
  uint32_t words[4] = {0, 0, 0, 0};
#pragma unroll
  for (int l = 0; l < N; ++l) words[l / kPerWord] |= to_bits(device::from_float<S>(v[l])) << (kBits * (l % kPerWord));
  *reinterpret_cast<uint4*>(p) = make_uint4(words[0], words[1], words[2], words[3]);
}

template <int N>
__device__ __forceinline__ void copy_lanes(const float (&from)[N], float (&to)[N]) {
#pragma unroll
  for (int l = 0; l < N; ++l) to[l] = from[l];
}

// Each thread runs the program on vectors of N consecutive output elements (grid-stride). The
// previous instruction's result stays in registers (`last`); registers read later than that
// also go to their slot of `kept` (args.kept_slot): the only dynamically indexed array.
// kRows: PointwiseVector::kRows, else kFlat (see pointwise_kernel.h).
template <typename S, bool kRows>
__global__ void __launch_bounds__(512) pointwise_vector_kernel(const __grid_constant__ PointwiseKernelArgs args) {
  constexpr int N = Lanes<S>::kWidth;
  float kept[kMaxPointwiseKept][N];
  const int64_t count = args.count;
  const int64_t vectors = (count + N - 1) / N;  // kRows: count is a multiple of N
  const uint32_t row_vectors = kRows ? static_cast<uint32_t>(args.shape[1] / N) : 1;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t v = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; v < vectors; v += step) {
    const int64_t i = v * N;  // the first element; also its output offset (the output is contiguous)
    int64_t row = 0, col = i;
    if (kRows) {  // the host keeps the vector count below 2^31
      row = static_cast<uint32_t>(v) / row_vectors;
      col = (v - row * row_vectors) * N;
    }
    const bool full = kRows || count - i >= N;
    const int valid = full ? N : static_cast<int>(count - i);
    float last[N];
    for (int k = 0; k < args.num_inputs; ++k) {
      const S* p = static_cast<const S*>(args.in[k]);
      const int64_t row_offset = kRows ? row * args.in_stride[k][0] : 0;
      const int64_t inner = args.in_stride[k][kRows ? 1 : 0];
      float x[N];
      if (inner == 0) {
        const float scalar = device::to_float<S>(p[row_offset]);
#pragma unroll
        for (int l = 0; l < N; ++l) x[l] = scalar;
      } else if (full) {
        load_lanes<S, N>(p + row_offset + col, x);
      } else {  // the tail (kFlat only): lanes past the end compute on zeros and are not stored
#pragma unroll
        for (int l = 0; l < N; ++l) x[l] = l < valid ? device::to_float<S>(p[col + l]) : 0.0f;
      }
      if (args.kept_slot[k] >= 0) copy_lanes(x, kept[args.kept_slot[k]]);
      if (k == args.num_inputs - 1) copy_lanes(x, last);
    }
    for (int n = 0; n < args.num_instrs; ++n) {
      const PointwiseKernelInstr& in = args.instrs[n];
      const int own = args.num_inputs + n;
      float a[N], b[N], c[N];
      if (in.a == own - 1) copy_lanes(last, a);
      else copy_lanes(kept[args.kept_slot[in.a]], a);
      if (in.operands >= 2) {
        if (in.b == own - 1) copy_lanes(last, b);
        else copy_lanes(kept[args.kept_slot[in.b]], b);
      } else {
        copy_lanes(a, b);
      }
      if (in.operands >= 3) {
        if (in.c == own - 1) copy_lanes(last, c);
        else copy_lanes(kept[args.kept_slot[in.c]], c);
      } else {
        copy_lanes(a, c);
      }
      evaluate<F32, N>(in, a, b, c, last);
      round_lanes<N>(last, in.type);
      if (args.kept_slot[own] >= 0) copy_lanes(last, kept[args.kept_slot[own]]);
    }
    S* out = static_cast<S*>(args.out) + i;
    if (full) {
      store_lanes<S, N>(out, last);
    } else {
#pragma unroll
      for (int l = 0; l < N; ++l)
        if (l < valid) out[l] = device::from_float<S>(last[l]);
    }
  }
}

template <typename S>
void launch_vector(const PointwiseKernelArgs& args, int threads, cudaStream_t stream) {
  const int64_t vectors = (args.count + Lanes<S>::kWidth - 1) / Lanes<S>::kWidth;
  const unsigned blocks = device::grid_for(vectors, threads);
  if (args.vector == PointwiseVector::kRows) pointwise_vector_kernel<S, true><<<blocks, threads, 0, stream>>>(args);
  else pointwise_vector_kernel<S, false><<<blocks, threads, 0, stream>>>(args);
}

template <typename M>
void launch(const PointwiseKernelArgs& args, int threads, cudaStream_t stream) {
  const unsigned blocks = device::grid_for(args.count, threads);
  if (args.rank <= 1) pointwise_kernel<M, true><<<blocks, threads, 0, stream>>>(args);
  else pointwise_kernel<M, false><<<blocks, threads, 0, stream>>>(args);
}

}  // namespace

cudaError_t launch_pointwise_kernel(const PointwiseKernelArgs& args, int threads, cudaStream_t stream) {
  if (args.count == 0) return cudaSuccess;
  if (threads <= 0 || threads > 512 || threads % 32 || args.num_instrs <= 0) return cudaErrorInvalidValue;
  if (args.vector != PointwiseVector::kNone && !args.fp64) {
    switch (args.out_type) {
      case DataType::kFloat32: launch_vector<float>(args, threads, stream); return cudaGetLastError();
      case DataType::kFloat16: launch_vector<__half>(args, threads, stream); return cudaGetLastError();
      case DataType::kBFloat16: launch_vector<__nv_bfloat16>(args, threads, stream); return cudaGetLastError();
      default: return cudaErrorInvalidValue;
    }
  }
  if (args.fp64) launch<F64>(args, threads, stream);
  else launch<F32>(args, threads, stream);
  return cudaGetLastError();
}

}  // namespace tensoracle::backends::cuda
