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
  static __device__ __forceinline__ float fmod(float x, float y) { return fmodf(x, y); }
  static __device__ __forceinline__ float copysign(float x, float y) { return copysignf(x, y); }
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
  static __device__ __forceinline__ double fmod(double x, double y) { return ::fmod(x, y); }
  static __device__ __forceinline__ double copysign(double x, double y) { return ::copysign(x, y); }
};

// x mod y with the sign of y, as the reference's floor_mod (fmod is exact, so only the move into
// y's sign rounds).
template <typename M>
__device__ __forceinline__ typename M::T floor_mod(typename M::T x, typename M::T y) {
  using T = typename M::T;
  const T r = M::fmod(x, y);
  if (r == T(0)) return M::copysign(T(0), y);
  return (r < T(0)) != (y < T(0)) ? r + y : r;
}

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
    case PointwiseCode::kMod:
      // Integer x mod 0 is 0; float x mod 0 is NaN.
      if (integer) return lanes(A, B, C, R, [&](T a, T b, T) { return b == zero ? zero : floor_mod<M>(a, b); });
      return lanes(A, B, C, R, [&](T a, T b, T) { return floor_mod<M>(a, b); });
    case PointwiseCode::kFmod:
      if (integer) return lanes(A, B, C, R, [&](T a, T b, T) { return b == zero ? zero : M::fmod(a, b); });
      return lanes(A, B, C, R, [&](T a, T b, T) { return M::fmod(a, b); });
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
    case PointwiseCode::kSign:  // both zeros give +0; NaN stays NaN
      return lanes(A, B, C, R, [&](T a, T, T) { return a > zero ? one : a < zero ? -one : a == zero ? zero : a; });
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
    case PointwiseCode::kQuantize:  // one fp32 division whatever T is, as the reference's quantize
      return lanes(A, B, C, R, [&](T a, T b, T) {
        return static_cast<T>(device::quantized_value(static_cast<float>(a) / static_cast<float>(b), in.type));
      });
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
      // A quantize's result is already a value of its type (quantized_value): no second rounding.
      reg[args.num_inputs + n] = in.code == PointwiseCode::kQuantize ? r[0] : round_to<T>(r[0], in.type);
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

template <typename S>
constexpr DataType kStorageType = DataType::kFloat32;
template <>
constexpr DataType kStorageType<__half> = DataType::kFloat16;
template <>
constexpr DataType kStorageType<__nv_bfloat16> = DataType::kBFloat16;

// The N elements of one 16-byte word as floats.
template <typename S, int N>
__device__ __forceinline__ void unpack_lanes(const uint4& raw, float (&v)[N]) {
  static_assert(N * sizeof(S) == 16, "one 16-byte access");
  constexpr int kPerWord = 4 / static_cast<int>(sizeof(S)), kBits = 8 * static_cast<int>(sizeof(S));
  const uint32_t words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
  for (int l = 0; l < N; ++l) v[l] = device::to_float<S>(from_bits<S>(words[l / kPerWord] >> (kBits * (l % kPerWord))));
}

// Elements 0 .. N - 1 of `p` (16-byte aligned), one 16-byte load.
template <typename S, int N>
__device__ __forceinline__ void load_lanes(const S* p, float (&v)[N]) {
  unpack_lanes<S, N>(*reinterpret_cast<const uint4*>(p), v);
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

template <int N>
__device__ __forceinline__ void fill_lanes(float value, float (&to)[N]) {
#pragma unroll
  for (int l = 0; l < N; ++l) to[l] = value;
}

// The N lanes' codes as N bytes, one aligned store (N is 4 or 8): each lane quantized as a
// quantize layer stores it (device::quantized_code), which leaves a value the quantize
// instruction already made representable as it is.
template <int N>
__device__ __forceinline__ void store_codes(uint8_t* p, DataType type, const float (&v)[N]) {
  static_assert(N == 4 || N == 8, "4 or 8 lanes");
  uint32_t words[2] = {0, 0};
#pragma unroll
  for (int l = 0; l < N; ++l) words[l / 4] |= static_cast<uint32_t>(device::quantized_code(v[l], type)) << (8 * (l % 4));
  if (N == 8) *reinterpret_cast<uint2*>(p) = make_uint2(words[0], words[1]);
  else *reinterpret_cast<uint32_t*>(p) = words[0];
}

// Writes output elements first .. first + valid - 1: lanes of S, or codes where args.out_type is
// the quantized type a final kQuantize produced (a uniform branch, once per vector).
template <typename S, int N>
__device__ __forceinline__ void store_output(const PointwiseKernelArgs& args, int64_t first, int valid,
                                             const float (&v)[N]) {
  if (args.out_type != args.lane_type) {
    uint8_t* out = static_cast<uint8_t*>(args.out) + first;
    if (valid == N) {
      store_codes<N>(out, args.out_type, v);
    } else {
#pragma unroll
      for (int l = 0; l < N; ++l)
        if (l < valid) out[l] = device::quantized_code(v[l], args.out_type);
    }
    return;
  }
  S* out = static_cast<S*>(args.out) + first;
  if (valid == N) {
    store_lanes<S, N>(out, v);
  } else {
#pragma unroll
    for (int l = 0; l < N; ++l)
      if (l < valid) out[l] = device::from_float<S>(v[l]);
  }
}

// kStrided: the coordinates of a vector's first element, innermost dim first (c[j] is the
// coordinate along dim rank - 1 - j). Indexed only by unrolled loops, so they stay in registers;
// the host guarantees fewer than 2^31 elements, so coordinates and offsets fit 32 bits.
struct Coordinates {
  int c[kMaxPointwiseRank];

  __device__ __forceinline__ void split(const PointwiseKernelArgs& args, uint32_t index) {
#pragma unroll
    for (int j = 0; j < kMaxPointwiseRank; ++j) {
      c[j] = 0;
      if (j + 1 < args.rank) {
        const uint32_t size = static_cast<uint32_t>(args.shape[args.rank - 1 - j]);
        c[j] = static_cast<int>(index % size);
        index /= size;
      } else if (j + 1 == args.rank) {
        c[j] = static_cast<int>(index);  // the outermost coordinate: what is left
      }
    }
  }
  // The element offset of these coordinates in input k.
  __device__ __forceinline__ int offset(const PointwiseKernelArgs& args, int k) const {
    int offset = 0;
#pragma unroll
    for (int j = 0; j < kMaxPointwiseRank; ++j)
      if (j < args.rank) offset += c[j] * static_cast<int>(args.in_stride[k][args.rank - 1 - j]);
    return offset;
  }
  // Moves to the next element in row-major order, keeping `offset` (in input k) in step: the
  // innermost coordinate advances and carries outwards (no division).
  __device__ __forceinline__ void advance(const PointwiseKernelArgs& args, int k, int& offset) {
#pragma unroll
    for (int j = 0; j < kMaxPointwiseRank; ++j) {
      if (j >= args.rank) break;
      const int d = args.rank - 1 - j;
      const int stride = static_cast<int>(args.in_stride[k][d]);
      offset += stride;
      if (++c[j] < static_cast<int>(args.shape[d])) break;
      offset -= c[j] * stride;
      c[j] = 0;
    }
  }
};

// kStrided, input k stored as L from element `offset` on: one value for all lanes (kBroadcast)
// or lane by lane (kGather), the lanes past `valid` 0.
template <typename L, int N>
__device__ __forceinline__ void load_strided(const PointwiseKernelArgs& args, int k, PointwiseInput mode, int offset,
                                             int valid, const Coordinates& at, float (&x)[N]) {
  const L* p = static_cast<const L*>(args.in[k]);
  if (mode == PointwiseInput::kBroadcast) {
    fill_lanes(device::to_float<L>(p[offset]), x);
    return;
  }
  Coordinates lane = at;
#pragma unroll
  for (int l = 0; l < N; ++l) {
    x[l] = l < valid ? device::to_float<L>(p[offset]) : 0.0f;
    if (l + 1 < N) lane.advance(args, k, offset);
  }
}

// Input k's values for the vector of output elements first .. first + valid - 1 (lanes past
// `valid` read nothing and hold 0). S: the output's type.
template <typename S, bool kStrided, int N>
__device__ __forceinline__ void load_input(const PointwiseKernelArgs& args, int k, int64_t first, int valid,
                                           const Coordinates& at, float (&x)[N]) {
  const PointwiseInput mode = args.in_mode[k];
  if (!kStrided) {  // every input has type S and is contiguous (kVector), or is a scalar (kBroadcast)
    const S* p = static_cast<const S*>(args.in[k]);
    if (mode == PointwiseInput::kBroadcast) {
      fill_lanes(device::load<float>(args.in[k], 0, args.in_type[k]), x);  // a scalar of its own type
    } else if (valid == N) {
      load_lanes<S, N>(p + first, x);
    } else {
#pragma unroll
      for (int l = 0; l < N; ++l) x[l] = l < valid ? device::to_float<S>(p[first + l]) : 0.0f;
    }
    return;
  }
  const int offset = at.offset(args, k);
  if (mode == PointwiseInput::kVector) {
    load_lanes<S, N>(static_cast<const S*>(args.in[k]) + offset, x);
    return;
  }
  // Any of fp32/fp16/bf16 (the host allows no other input type here).
  switch (args.in_type[k]) {
    case DataType::kFloat16: return load_strided<__half, N>(args, k, mode, offset, valid, at, x);
    case DataType::kBFloat16: return load_strided<__nv_bfloat16, N>(args, k, mode, offset, valid, at, x);
    default: return load_strided<float, N>(args, k, mode, offset, valid, at, x);
  }
}

// Each thread runs the program on vectors of N consecutive output elements (grid-stride). The
// previous instruction's result stays in registers (`last`); an input is loaded where an
// instruction reads it; computed registers read later than the next instruction also go to their
// slot of `kept` (args.kept_slot), the only dynamically indexed array, which kKept = false
// programs (straight chains) do not have.
template <typename S, bool kStrided, bool kKept>
__global__ void __launch_bounds__(512) pointwise_vector_kernel(const __grid_constant__ PointwiseKernelArgs args) {
  constexpr int N = Lanes<S>::kWidth;
  float kept[kKept ? kMaxPointwiseKept : 1][N];
  const int64_t count = args.count;
  const int64_t vectors = (count + N - 1) / N;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t v = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; v < vectors; v += step) {
    const int64_t first = v * N;  // also its output offset (the output is contiguous)
    const int valid = count - first >= N ? N : static_cast<int>(count - first);
    Coordinates at;
    if (kStrided) at.split(args, static_cast<uint32_t>(first));
    // Register r for instruction `own`: an input (loaded), the previous result, or a kept one.
    const auto fetch = [&](int r, int own, const float(&last)[N], float(&x)[N]) {
      if (r < args.num_inputs) load_input<S, kStrided, N>(args, r, first, valid, at, x);
      else if (!kKept || r == own - 1) copy_lanes(last, x);
      else copy_lanes(kept[args.kept_slot[r]], x);
    };
    float last[N];
    for (int n = 0; n < args.num_instrs; ++n) {
      const PointwiseKernelInstr& in = args.instrs[n];
      const int own = args.num_inputs + n;
      float a[N], b[N], c[N];
      fetch(in.a, own, last, a);
      if (in.operands >= 2) fetch(in.b, own, last, b);
      else copy_lanes(a, b);
      if (in.operands >= 3) fetch(in.c, own, last, c);
      else copy_lanes(a, c);
      evaluate<F32, N>(in, a, b, c, last);
      if (in.code != PointwiseCode::kQuantize) round_lanes<N>(last, in.type);  // a quantize's values are exact
      if (kKept && args.kept_slot[own] >= 0) copy_lanes(last, kept[args.kept_slot[own]]);
    }
    store_output<S, N>(args, first, valid, last);
  }
}

// The vector kernel for one program shape: one contiguous input of type S, one instruction
// kCode reading it, the output contiguous of type S (kFlat); or (kQuantized) that instruction
// followed by a quantize by a scalar scale (input 1), the output int8 or fp8 codes. With the code
// fixed, the kernel holds only that activation's arithmetic (few registers), and each thread
// issues the loads of kUnroll vectors before computing any. The last count % N elements go lane
// by lane.
constexpr int kUnroll = 4;

template <typename S, PointwiseCode kCode, bool kQuantized>
__global__ void __launch_bounds__(512) pointwise_activation_kernel(const __grid_constant__ PointwiseKernelArgs args) {
  constexpr int N = Lanes<S>::kWidth;
  PointwiseKernelInstr in = args.instrs[0];
  in.code = kCode;  // evaluate() folds to this one case
  const S* x = static_cast<const S*>(args.in[0]);
  const float scale = kQuantized ? device::load<float>(args.in[1], 0, args.in_type[1]) : 1.0f;
  const DataType codes = args.out_type;
  // The activation's values, rounded to S, then (kQuantized) divided by the scale: the stores
  // quantize them (store_codes), once, where kQuantize's value would be encoded a second time.
  const auto compute = [&](auto& a, auto& r) {
    evaluate<F32>(in, a, a, a, r);
    round_lanes(r, kStorageType<S>);
    if (kQuantized)
      for (float& v : r) v = v / scale;
  };
  const int64_t vectors = args.count / N;
  const int64_t tile = static_cast<int64_t>(blockDim.x) * kUnroll;
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * tile + threadIdx.x; base < vectors;
       base += static_cast<int64_t>(gridDim.x) * tile) {
    uint4 raw[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t v = base + static_cast<int64_t>(u) * blockDim.x;
      if (v < vectors) raw[u] = *reinterpret_cast<const uint4*>(x + v * N);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t v = base + static_cast<int64_t>(u) * blockDim.x;
      if (v >= vectors) break;
      float a[N], r[N];
      unpack_lanes<S, N>(raw[u], a);
      compute(a, r);
      if (kQuantized) store_codes<N>(static_cast<uint8_t*>(args.out) + v * N, codes, r);
      else store_lanes<S, N>(static_cast<S*>(args.out) + v * N, r);
    }
  }
  const int64_t tail = vectors * N + static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (tail < args.count) {
    float a[1] = {device::to_float<S>(x[tail])}, r[1];
    compute(a, r);
    if (kQuantized) static_cast<uint8_t*>(args.out)[tail] = device::quantized_code(r[0], codes);
    else static_cast<S*>(args.out)[tail] = device::from_float<S>(r[0]);
  }
}

// The activations with a kernel of their own (the ones models run alone: GELU after a matrix
// product, ReLU/SiLU after a convolution without a fusable epilogue, ...), alone or followed by
// the quantize a quantized graph puts before the next product (BERT's GELU before its FFN's
// second GEMM).
template <typename S>
bool launch_activation(const PointwiseKernelArgs& args, int threads, cudaStream_t stream) {
  const PointwiseKernelInstr& in = args.instrs[0];
  if (args.vector != PointwiseVector::kFlat || in.operands != 1 || in.a != 0 || in.type != args.lane_type ||
      args.in_mode[0] != PointwiseInput::kVector)
    return false;
  const PointwiseKernelInstr& q = args.instrs[1];
  const bool alone = args.num_inputs == 1 && args.num_instrs == 1 && args.out_type == args.lane_type;
  const bool quantized = args.num_inputs == 2 && args.num_instrs == 2 && q.code == PointwiseCode::kQuantize &&
                         q.a == 2 && q.b == 1 && args.in_mode[1] == PointwiseInput::kBroadcast;
  if (!alone && !quantized) return false;
  const int64_t per_thread = Lanes<S>::kWidth * kUnroll;
  const unsigned blocks = device::grid_for((args.count + per_thread - 1) / per_thread, threads);
#define TO_ACTIVATION_KERNEL(code)                                                                  \
  case PointwiseCode::code:                                                                         \
    if (quantized) pointwise_activation_kernel<S, PointwiseCode::code, true><<<blocks, threads, 0, stream>>>(args); \
    else pointwise_activation_kernel<S, PointwiseCode::code, false><<<blocks, threads, 0, stream>>>(args);          \
    return true;
  switch (in.code) {
    TO_ACTIVATION_KERNEL(kGeluErf)
    TO_ACTIVATION_KERNEL(kGeluTanh)
    TO_ACTIVATION_KERNEL(kRelu)
    TO_ACTIVATION_KERNEL(kSilu)
    TO_ACTIVATION_KERNEL(kSigmoid)
    TO_ACTIVATION_KERNEL(kTanh)
    default: return false;
  }
#undef TO_ACTIVATION_KERNEL
}

template <typename S>
void launch_vector(const PointwiseKernelArgs& args, int threads, cudaStream_t stream) {
  if (launch_activation<S>(args, threads, stream)) return;
  const int64_t vectors = (args.count + Lanes<S>::kWidth - 1) / Lanes<S>::kWidth;
  const unsigned blocks = device::grid_for(vectors, threads);
  const bool strided = args.vector == PointwiseVector::kStrided;
  if (strided && args.kept) pointwise_vector_kernel<S, true, true><<<blocks, threads, 0, stream>>>(args);
  else if (strided) pointwise_vector_kernel<S, true, false><<<blocks, threads, 0, stream>>>(args);
  else if (args.kept) pointwise_vector_kernel<S, false, true><<<blocks, threads, 0, stream>>>(args);
  else pointwise_vector_kernel<S, false, false><<<blocks, threads, 0, stream>>>(args);
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
    switch (args.lane_type) {
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
