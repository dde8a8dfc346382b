// The pointwise interpreter. Each thread reads its element of every input (through the merged
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

template <typename M>
__device__ __forceinline__ typename M::T evaluate(const PointwiseKernelInstr& in, typename M::T a, typename M::T b,
                                                  typename M::T c) {
  using T = typename M::T;
  const T alpha = static_cast<T>(in.alpha), beta = static_cast<T>(in.beta);
  const T zero = T(0), one = T(1), half = T(0.5);
  const T nan = static_cast<T>(__longlong_as_double(0x7FF8000000000000LL));
  const bool a_nan = a != a;
  switch (in.code) {
    case PointwiseCode::kAdd: return a + b;
    case PointwiseCode::kSub: return a - b;
    case PointwiseCode::kMul: return a * b;
    case PointwiseCode::kDiv:
      if (is_integer_type(in.type)) return b == zero ? zero : M::trunc(a / b);  // truncating; x / 0 is 0
      return a / b;
    case PointwiseCode::kPow:
      // Integer powers must come out exact, so they take the correctly-behaved fp64 pow.
      if (is_integer_type(in.type)) return static_cast<T>(::pow(static_cast<double>(a), static_cast<double>(b)));
      return M::pow(a, b);
    case PointwiseCode::kMax: return a_nan || b != b ? nan : (a < b ? b : a);
    case PointwiseCode::kMin: return a_nan || b != b ? nan : (b < a ? b : a);
    case PointwiseCode::kEqual: return a == b ? one : zero;
    case PointwiseCode::kLess: return a < b ? one : zero;
    case PointwiseCode::kGreater: return a > b ? one : zero;
    case PointwiseCode::kLessEqual: return a <= b ? one : zero;
    case PointwiseCode::kGreaterEqual: return a >= b ? one : zero;
    case PointwiseCode::kAnd: return a != zero && b != zero ? one : zero;
    case PointwiseCode::kOr: return a != zero || b != zero ? one : zero;
    case PointwiseCode::kExp: return M::exp(a);
    case PointwiseCode::kLog: return M::log(a);
    case PointwiseCode::kSqrt: return M::sqrt(a);
    case PointwiseCode::kRsqrt: return one / M::sqrt(a);
    case PointwiseCode::kRecip: return one / a;
    case PointwiseCode::kAbs: return M::fabs(a);
    case PointwiseCode::kNeg: return -a;
    case PointwiseCode::kSin: return M::sin(a);
    case PointwiseCode::kCos: return M::cos(a);
    case PointwiseCode::kErf: return M::erf(a);
    case PointwiseCode::kFloor: return M::floor(a);
    case PointwiseCode::kCeil: return M::ceil(a);
    case PointwiseCode::kRound: return M::rint(a);  // halves to even
    case PointwiseCode::kRelu: return a < zero ? zero : a;
    case PointwiseCode::kLeakyRelu: return a < zero ? alpha * a : a;
    case PointwiseCode::kSigmoid: return one / (one + M::exp(-a));
    case PointwiseCode::kTanh: return M::tanh(a);
    case PointwiseCode::kGeluErf: return half * a * (one + M::erf(a * T(0.70710678118654752440)));
    case PointwiseCode::kGeluTanh:
      return half * a * (one + M::tanh(T(0.79788456080286535588) * (a + T(0.044715) * a * a * a)));
    case PointwiseCode::kSilu: return a * (one / (one + M::exp(-a)));
    case PointwiseCode::kSoftplus: {
      const T ax = alpha * a;  // log(1 + e^ax) without overflow
      return (ax > zero ? ax + M::log1p(M::exp(-ax)) : M::log1p(M::exp(ax))) / alpha;
    }
    case PointwiseCode::kClip: return a_nan ? a : clamp(a, alpha, beta);
    case PointwiseCode::kHardSigmoid: return a_nan ? a : clamp(alpha * a + beta, zero, one);
    case PointwiseCode::kHardSwish: return a_nan ? a : a * clamp(alpha * a + beta, zero, one);
    case PointwiseCode::kSelect: return a != zero ? b : c;
    case PointwiseCode::kCast: return a;
  }
  return nan;
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
      reg[args.num_inputs + n] = round_to<T>(evaluate<M>(in, reg[in.a], reg[in.b], reg[in.c]), in.type);
    }
    store<T>(args.out, out_offset, args.out_type, reg[args.num_inputs + args.num_instrs - 1]);
  }
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
  if (args.fp64) launch<F64>(args, threads, stream);
  else launch<F32>(args, threads, stream);
  return cudaGetLastError();
}

}  // namespace tensoracle::backends::cuda
