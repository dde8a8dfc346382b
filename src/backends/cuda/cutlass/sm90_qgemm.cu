// The sm90 quantized GEMMs (sm90_qgemm.h): which compiled kernel a GEMM names, and the checks
// around its launch. The kernels are in sm90_qgemm_<group>.cu (sm90_qgemm_kernel.cuh).
#include "backends/cuda/cutlass/sm90_qgemm.h"

#include <cutlass/numeric_types.h>

#include <cstdint>
#include <memory>
#include <type_traits>

#include "backends/cuda/cutlass/sm90_qgemm_kernels.h"

namespace tensoracle::backends::cuda {

namespace {

using sm90::Kernel;
using sm90::kernel_ops;
using sm90::KernelOps;

// Calls `f` with the operations of the kernel `gemm` names; false when none is compiled. Compiled:
// fp16 products, with a residual or without, or quantized to the input's own type; the erf
// GELU's kernels without a residual.
template <class F>
bool dispatch(const Sm90QuantizedGemm& gemm, F&& f) {
  if (gemm.product != DataType::kFloat16) return false;
  auto by_tile = [&](auto input, auto output, auto residual, auto gelu_erf) {
    using Input = decltype(input);
    using Output = decltype(output);
    constexpr bool kResidual = decltype(residual)::value, kGeluErf = decltype(gelu_erf)::value;
    switch (gemm.tile) {
      case Sm90GemmTile::kCooperative128x128:
        f(kernel_ops<Kernel<Input, cutlass::half_t, Output, kResidual, Sm90GemmTile::kCooperative128x128, kGeluErf>>());
        return true;
      case Sm90GemmTile::kPingpong64x128:
        f(kernel_ops<Kernel<Input, cutlass::half_t, Output, kResidual, Sm90GemmTile::kPingpong64x128, kGeluErf>>());
        return true;
      case Sm90GemmTile::kPingpong128x128:
        // Not for fp8: its mainloop promotes into a second 128x128 accumulator, and a warp group
        // holding two spills registers to the stack.
        if constexpr (std::is_same_v<Input, cutlass::float_e4m3_t>) return false;
        else {
          f(kernel_ops<Kernel<Input, cutlass::half_t, Output, kResidual, Sm90GemmTile::kPingpong128x128, kGeluErf>>());
          return true;
        }
    }
    return false;
  };
  auto by_output = [&](auto input) {
    if (gemm.gelu_erf) {
      if (gemm.residual) return false;
      if (gemm.output == DataType::kFloat16) return by_tile(input, cutlass::half_t{}, std::false_type{}, std::true_type{});
      return gemm.output == gemm.input && by_tile(input, input, std::false_type{}, std::true_type{});
    }
    if (gemm.output == DataType::kFloat16)
      return gemm.residual ? by_tile(input, cutlass::half_t{}, std::true_type{}, std::false_type{})
                           : by_tile(input, cutlass::half_t{}, std::false_type{}, std::false_type{});
    return gemm.output == gemm.input && !gemm.residual && by_tile(input, input, std::false_type{}, std::false_type{});
  };
  if (gemm.input == DataType::kInt8) return by_output(int8_t{});
  if (gemm.input == DataType::kFloat8E4M3) return by_output(cutlass::float_e4m3_t{});
  return false;
}

}  // namespace

std::string sm90_quantized_gemm_refusal(const Sm90QuantizedGemm& gemm, const Sm90QuantizedGemmArgs& args) {
  if (args.m <= 0 || args.n <= 0 || args.k <= 0 || args.m > INT32_MAX || args.n > INT32_MAX || args.k > INT32_MAX)
    return "sizes outside (0, 2^31)";
  std::string reason = gemm.input == DataType::kFloat8E4M3 && gemm.tile == Sm90GemmTile::kPingpong128x128
                           ? "no fp8 kernel with this tile (two 128x128 accumulators a warp group spill)"
                           : "no kernel compiled for these types";
  dispatch(gemm, [&](const KernelOps& ops) { reason = ops.refusal(args); });
  return reason;
}

size_t sm90_quantized_gemm_workspace(const Sm90QuantizedGemm& gemm, const Sm90QuantizedGemmArgs& args) {
  size_t bytes = 0;
  dispatch(gemm, [&](const KernelOps& ops) { bytes = ops.workspace(args); });
  return bytes;
}

namespace {

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace

std::unique_ptr<Sm90QuantizedGemmLauncher> make_sm90_quantized_gemm_launcher(const Sm90QuantizedGemm& gemm) {
  std::unique_ptr<Sm90QuantizedGemmLauncher> launcher;
  dispatch(gemm, [&](const KernelOps& ops) { launcher = ops.make_launcher(); });
  if (launcher) launcher->gemm_ = gemm;
  return launcher;
}

cudaError_t Sm90QuantizedGemmLauncher::prepare() { return set_up(); }

cudaError_t Sm90QuantizedGemmLauncher::launch(const Sm90QuantizedGemmArgs& args, void* workspace, size_t workspace_bytes,
                                              cudaStream_t stream) {
  if (!args.a || !args.b || !args.d || !args.a_scale || !args.b_scale || (args.residual != nullptr) != gemm_.residual ||
      (args.y_scale != nullptr) != (gemm_.output != gemm_.product) ||
      (args.activation == QuantizedActivation::kGeluErf) != gemm_.gelu_erf)
    return cudaErrorInvalidValue;
  // The tensor memory accelerator reads and writes 16-byte aligned rows; the vector loads of the
  // bias and the per-channel scales are 16 bytes too.
  if (!aligned16(args.a) || !aligned16(args.b) || !aligned16(args.d) || !aligned16(args.residual) ||
      !aligned16(args.bias) || (args.b_per_channel && !aligned16(args.b_scale)))
    return cudaErrorMisalignedAddress;
  return run(args, workspace, workspace_bytes, stream);
}

}  // namespace tensoracle::backends::cuda
