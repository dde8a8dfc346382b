// The sm90 quantized GEMMs' kernels (sm90_qgemm.h): CUTLASS's TMA warp-specialized mainloop on
// int8 or fp8 tensor cores, and an epilogue visitor tree whose one compute node applies the
// scales, bias, residual and activation with the reference's roundings. Included by the
// sm90_qgemm_<group>.cu files, each of which compiles some of the kernels (CUTLASS's templates
// take minutes a kernel group: split, they build in parallel); sm_90a only (wgmma).
#pragma once

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/epilogue/fusion/sm90_callbacks_tma_warpspecialized.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/kernel/gemm_universal.hpp>

#include <memory>
#include <string>
#include <type_traits>

#include "backends/cuda/cutlass/sm90_qgemm_kernels.h"
#include "backends/cuda/kernels/gelu_erf.cuh"

namespace tensoracle::backends::cuda::sm90 {

using namespace cute;  // NOLINT(google-build-using-namespace): CUTLASS's shapes and strides
namespace fusion = cutlass::epilogue::fusion;

// What the compute node reads at run time besides its inputs.
struct EpilogueParams {
  int activation = 0;  // QuantizedActivation: none, relu or gelu_tanh (gelu_erf is a kernel's own)
  bool bias = false;   // a bias input (else the broadcast gives zeros, and no rounding is due)
};

// The epilogue of the reference's layers (qmatmul_epilogue.cu computes the same in fp64): each
// layer's result rounded to the product type, the arithmetic between in fp32. The roundings run
// on whole fragments: the array converters convert two values an instruction. kRequantize: divide
// by sy (the output's conversion then rounds and saturates). kGeluErf: the erf GELU is the
// activation, the one compiled in. The epilogue is unrolled over every fragment of the tile, so
// each activation compiled into a kernel adds its code that many times: with all of them each
// kernel was 7,000 SASS instructions (CUTLASS's own epilogue: 1,200), and the erf GELU took twice
// the GEMM's time on an H100. Whether the code's size was the cause is not measured yet.
template <class Product, bool kRequantize, bool kGeluErf>
struct QuantizedEpilogue {
  template <class T>  // cutlass::Array<float, N> (and float, where CUTLASS asks for Arguments)
  struct Fn {
    using Arguments = EpilogueParams;

    CUTLASS_DEVICE static T round(T const& x) {
      constexpr int N = T::kElements;
      return cutlass::NumericArrayConverter<float, Product, N>{}(cutlass::NumericArrayConverter<Product, float, N>{}(x));
    }

    // One loop per activation, the switch outside it (inside, its branches kept the elements'
    // chains from overlapping).
    CUTLASS_DEVICE static void activate(T& p, int activation) {
      constexpr float kSqrt2OverPi = 0.79788456080286535588f;
      if constexpr (kGeluErf) {
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < T::kElements; ++i) p[i] = device::gelu_erf(p[i]);
      } else if (activation == static_cast<int>(QuantizedActivation::kRelu)) {
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < T::kElements; ++i) p[i] = p[i] < 0.0f ? 0.0f : p[i];
      } else if (activation == static_cast<int>(QuantizedActivation::kGeluTanh)) {
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < T::kElements; ++i)
          p[i] = 0.5f * p[i] * (1.0f + tanhf(kSqrt2OverPi * (p[i] + 0.044715f * p[i] * p[i] * p[i])));
      }
    }

    // p / sy rounded to nearest in fp32, as the quantize layer divides, without a division per
    // element (a correctly rounded division is a subroutine with a slow path, unrolled over the
    // tile: it made a quantizing kernel slower than one writing fp16 twice the bytes). With r the
    // correctly rounded 1/sy, q = p·r is within an ulp of p/sy, and q + (p − q·sy)·r, the
    // remainder exact in an fma, is p/sy correctly rounded (Markstein); a host check found no
    // difference from the division in 2·10^8 random pairs (scripts/fits/reciprocal_division.cpp).
    // It needs p·r and q·sy in range: p is an fp16 value, so sy within [2^-100, 2^100] suffices;
    // outside that the division runs. p infinite or NaN: p·r is what p / sy gives.
    CUTLASS_DEVICE static void requantize(T& p, float sy) {
      if (!(fabsf(sy) >= 0x1p-100f && fabsf(sy) <= 0x1p100f)) {
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < T::kElements; ++i) p[i] = p[i] / sy;
        return;
      }
      const float r = __frcp_rn(sy);
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < T::kElements; ++i) {
        const float q = p[i] * r;
        // q's sign: the sum would make +0 of p = -0, and e4m3 stores -0 as a code of its own.
        const float corrected = copysignf(fmaf(fmaf(-q, sy, p[i]), r, q), q);
        p[i] = isfinite(p[i]) ? corrected : q;
      }
    }

    CUTLASS_DEVICE T apply(T const& acc, T const& sa, T const& sb, T const& bias, T const& sy, T const* residual,
                           Arguments const& args) const {
      T p;
      CUTLASS_PRAGMA_UNROLL
      for (int i = 0; i < T::kElements; ++i) p[i] = acc[i] * sa[i] * sb[i];
      p = round(p);
      if (args.bias) {
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < T::kElements; ++i) p[i] += bias[i];
        p = round(p);
      }
      if (residual) {
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < T::kElements; ++i) p[i] += (*residual)[i];
        p = round(p);
      }
      if (kGeluErf || args.activation != 0) {
        activate(p, args.activation);
        p = round(p);
      }
      if constexpr (kRequantize) requantize(p, sy[0]);
      return p;
    }
    CUTLASS_DEVICE T operator()(T const& acc, T const& sa, T const& sb, T const& bias, T const& sy,
                                Arguments const& args) const {
      return apply(acc, sa, sb, bias, sy, nullptr, args);
    }
    CUTLASS_DEVICE T operator()(T const& acc, T const& sa, T const& sb, T const& bias, T const& sy, T const& residual,
                                Arguments const& args) const {
      return apply(acc, sa, sb, bias, sy, &residual, args);
    }
  };
};

template <class Product, class Output, class TileShape, bool kResidual, bool kGeluErf>
struct EpilogueTree {
  using Sa = fusion::Sm90ScalarBroadcast<float>;
  // sb: one value or one per column, chosen at run time (a bool N stride).
  using Sb = fusion::Sm90RowBroadcast<0, TileShape, float, float, Stride<_0, bool, int64_t>>;
  using Bias = fusion::Sm90RowBroadcast<0, TileShape, Product, float, Stride<_0, _1, int64_t>>;
  using Sy = fusion::Sm90ScalarBroadcast<float>;
  // The output conversion rounds to nearest even; into int8 or e4m3 it saturates (cvt .sat /
  // .satfinite), as the quantize layer does.
  using Epilogue = QuantizedEpilogue<Product, !std::is_same_v<Product, Output>, kGeluErf>;
  using Compute = fusion::Sm90Compute<Epilogue::template Fn, Output, float,
                                      cutlass::FloatRoundStyle::round_to_nearest>;
  using type =
      std::conditional_t<kResidual, fusion::Sm90EVT<Compute, fusion::Sm90AccFetch, Sa, Sb, Bias, Sy, fusion::Sm90SrcFetch<Product>>,
                         fusion::Sm90EVT<Compute, fusion::Sm90AccFetch, Sa, Sb, Bias, Sy>>;
};

template <class Input, class Product, class Output, bool kResidual, Sm90GemmTile kTile, bool kGeluErf>
struct Kernel {
  static constexpr bool kCooperative = kTile == Sm90GemmTile::kCooperative128x128;
  using TileShape = std::conditional_t<kTile == Sm90GemmTile::kPingpong64x128, Shape<_64, _128, _128>, Shape<_128, _128, _128>>;
  using ClusterShape = Shape<_1, _1, _1>;
  using MainloopSchedule = std::conditional_t<kCooperative, cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                                              cutlass::gemm::KernelTmaWarpSpecializedPingpong>;
  using EpilogueSchedule = std::conditional_t<kCooperative, cutlass::epilogue::TmaWarpSpecializedCooperative,
                                              cutlass::epilogue::TmaWarpSpecialized>;
  using Accumulator = std::conditional_t<std::is_same_v<Input, int8_t>, int32_t, float>;
  using ElementC = std::conditional_t<kResidual, Product, void>;
  static constexpr int kAlignProduct = 128 / cutlass::sizeof_bits<Product>::value;
  static constexpr int kAlignOutput = 128 / cutlass::sizeof_bits<Output>::value;
  static constexpr int kAlignInput = 128 / cutlass::sizeof_bits<Input>::value;

  using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, Accumulator, float, ElementC, cutlass::layout::RowMajor,
      kResidual ? kAlignProduct : kAlignOutput, Output, cutlass::layout::RowMajor, kAlignOutput, EpilogueSchedule,
      typename EpilogueTree<Product, Output, TileShape, kResidual, kGeluErf>::type>::CollectiveOp;
  using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Input, cutlass::layout::RowMajor, kAlignInput, Input,
      cutlass::layout::ColumnMajor, kAlignInput, Accumulator, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(
          sizeof(typename CollectiveEpilogue::SharedStorage))>,
      MainloopSchedule>::CollectiveOp;
  using GemmKernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop, CollectiveEpilogue>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;

  static typename Gemm::Arguments arguments(const Sm90QuantizedGemmArgs& a) {
    using StrideA = typename GemmKernel::StrideA;
    using StrideB = typename GemmKernel::StrideB;
    using StrideC = typename GemmKernel::StrideC;
    using StrideD = typename GemmKernel::StrideD;
    const StrideA stride_a = make_stride(a.k, _1{}, a.m * a.k);
    const StrideB stride_b = make_stride(a.k, _1{}, a.n * a.k);
    const StrideC stride_c = make_stride(a.n, _1{}, a.m * a.n);
    const StrideD stride_d = make_stride(a.n, _1{}, a.m * a.n);

    typename Gemm::Arguments args;
    args.mode = cutlass::gemm::GemmUniversalMode::kGemm;
    args.problem_shape = {static_cast<int>(a.m), static_cast<int>(a.n), static_cast<int>(a.k), 1};
    args.mainloop = {static_cast<const Input*>(a.a), stride_a, static_cast<const Input*>(a.b), stride_b};
    auto& tree = args.epilogue.thread;
    // Children in order (acc, sa, sb, bias[, residual]), then the compute node's parameters.
    get<1>(tree) = {{1.0f}, {a.a_scale}, {}};
    get<2>(tree) = {a.b_scale, 1.0f, {_0{}, a.b_per_channel, int64_t(0)}};
    get<3>(tree) = {static_cast<const Product*>(a.bias), Product(0.0f), {}};
    get<4>(tree) = {{1.0f}, {a.y_scale}, {}};
    get<kResidual ? 6 : 5>(tree) = EpilogueParams{static_cast<int>(a.activation), a.bias != nullptr};
    if constexpr (kResidual) args.epilogue.ptr_C = static_cast<const Product*>(a.residual);
    args.epilogue.dC = stride_c;
    args.epilogue.ptr_D = static_cast<Output*>(a.d);
    args.epilogue.dD = stride_d;
    args.hw_info.sm_count = a.sm_count;
    return args;
  }

  static std::string refusal(const Sm90QuantizedGemmArgs& a) {
    const cutlass::Status s = Gemm::can_implement(arguments(a));
    return s == cutlass::Status::kSuccess ? std::string() : std::string("CUTLASS: ") + cutlassGetStatusString(s);
  }
  static size_t workspace(const Sm90QuantizedGemmArgs& a) { return Gemm::get_workspace_size(arguments(a)); }
};

inline bool same_launch(const Sm90QuantizedGemmArgs& x, const Sm90QuantizedGemmArgs& y) {
  return x.m == y.m && x.n == y.n && x.k == y.k && x.a == y.a && x.b == y.b && x.a_scale == y.a_scale &&
         x.b_scale == y.b_scale && x.b_per_channel == y.b_per_channel && x.bias == y.bias && x.residual == y.residual &&
         x.activation == y.activation && x.y_scale == y.y_scale && x.d == y.d && x.sm_count == y.sm_count;
}

// One kernel's launches. Its parameters hold the tensor memory accelerator's descriptors, which
// encode the tensors' addresses: built on the host (a few microseconds, as long as a small GEMM
// runs), so kept and rebuilt only when an address, a size or the workspace changes; the
// workspace is checked then too. An engine's buffers stay where they are between runs. The
// kernel's shared-memory limit is raised once, in set_up(), so that a run makes no CUDA call but
// its launches (it may be captured into a graph).
template <class K>
class Launcher final : public Sm90QuantizedGemmLauncher {
 protected:
  cudaError_t set_up() override {
    constexpr int kSharedBytes = K::GemmKernel::SharedStorageSize;
    if (kSharedBytes < (48 << 10)) return cudaSuccess;
    return cudaFuncSetAttribute(cutlass::device_kernel<typename K::GemmKernel>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                kSharedBytes);
  }

  cudaError_t run(const Sm90QuantizedGemmArgs& a, void* workspace, size_t workspace_bytes, cudaStream_t stream) override {
    if (!ready_ || workspace != workspace_ || workspace_bytes != workspace_bytes_ || !same_launch(a, last_)) {
      ready_ = false;
      const typename K::Gemm::Arguments args = K::arguments(a);
      if (workspace_bytes < K::Gemm::get_workspace_size(args) ||
          K::GemmKernel::initialize_workspace(args, workspace, stream) != cutlass::Status::kSuccess)
        return cudaErrorInvalidValue;
      params_ = K::GemmKernel::to_underlying_arguments(args, workspace);
      last_ = a;
      workspace_ = workspace;
      workspace_bytes_ = workspace_bytes;
      ready_ = true;
    }
    if (K::Gemm::run(params_, stream) != cutlass::Status::kSuccess) {
      const cudaError_t launch = cudaGetLastError();
      return launch != cudaSuccess ? launch : cudaErrorLaunchFailure;
    }
    return cudaGetLastError();
  }

 private:
  typename K::GemmKernel::Params params_;
  Sm90QuantizedGemmArgs last_;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  bool ready_ = false;
};

template <class K>
const KernelOps& kernel_ops() {
  static const KernelOps ops{&K::refusal, &K::workspace,
                             []() -> std::unique_ptr<Sm90QuantizedGemmLauncher> { return std::make_unique<Launcher<K>>(); }};
  return ops;
}

}  // namespace tensoracle::backends::cuda::sm90

// Compiles the kernel of these parameters (Kernel's, the product fp16) into the including file.
#define TENSORACLE_SM90_KERNEL(Input, Output, kResidual, kTile, kGeluErf)                                              \
  template const tensoracle::backends::cuda::sm90::KernelOps& tensoracle::backends::cuda::sm90::kernel_ops<           \
      tensoracle::backends::cuda::sm90::Kernel<Input, cutlass::half_t, Output, kResidual,                              \
                                               tensoracle::backends::cuda::Sm90GemmTile::kTile, kGeluErf>>();
