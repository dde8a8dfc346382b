// Quantized GEMMs of our own on Hopper (compute capability 9.0 exactly: wgmma and TMA, compiled
// for sm_90a), built from CUTLASS's sm90 collectives with the whole Q/DQ epilogue in the kernel:
//
//   y[m, n] = act( round( round( acc[m, n] · sa · sb[n] ) + bias[n] ) + residual[m, n] )
//   d[m, n] = y[m, n], or Q(y[m, n]; sy): y / sy rounded to nearest even into int8 or fp8 e4m3,
//             saturating (a trailing quantize layer)
//
// acc the exact int32 (int8) or fp32 (fp8 e4m3) sum of a[m, :] · b[n, :]; every `round` to the
// product type, as the reference rounds each layer's output (docs/quantization.md), the arithmetic
// between in fp32. cuBLASLt cannot do this for int8 (its int32 product needs a kernel after it)
// nor for fp8 with per-channel weight scales (its vector mode needs the activation scale per row);
// here it is one kernel. Host code only in this header: the .cu is the one file that includes
// CUTLASS.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cuda_runtime_api.h>
#include <memory>
#include <string>

#include "tensoracle/types.h"

namespace tensoracle::backends::cuda {

// Tile shape and kernel schedule: the candidates the tactic timer chooses between.
enum class Sm90GemmTile : uint8_t {
  kCooperative128x128,  // two consumer warp groups on one 128x128 tile: large M
  kPingpong64x128,      // two 64x128 tiles in turn: small M, more tiles for the SMs
  kPingpong128x128,     // two 128x128 tiles in turn: one warp group's epilogue hides behind the
                        // other's mainloop
};
inline constexpr Sm90GemmTile kSm90GemmTiles[] = {Sm90GemmTile::kCooperative128x128, Sm90GemmTile::kPingpong64x128,
                                                  Sm90GemmTile::kPingpong128x128};
const char* sm90_gemm_tile_name(Sm90GemmTile tile);

enum class QuantizedActivation : uint8_t { kNone, kRelu, kGeluTanh, kGeluErf };

struct Sm90QuantizedGemm {
  DataType input = DataType::kInt8;        // a and b: kInt8 or kFloat8E4M3
  DataType product = DataType::kFloat16;   // y, bias and residual: kFloat16 (the one instantiated)
  DataType output = DataType::kFloat16;    // d: the product, or (quantized) the input's type
  bool residual = false;                   // not with a quantized output
  bool gelu_erf = false;                   // the erf GELU is the activation: kernels of its own,
                                           // without a residual (the others take none, relu, gelu_tanh)
  Sm90GemmTile tile = Sm90GemmTile::kCooperative128x128;

  std::string to_string() const;
};

struct Sm90QuantizedGemmArgs {
  int64_t m = 0, n = 0, k = 0;
  const void* a = nullptr;  // [m, k] row-major
  const void* b = nullptr;  // [n, k] row-major (each output channel's weights contiguous)
  const float* a_scale = nullptr;  // one value
  const float* b_scale = nullptr;  // one value, or n with b_per_channel
  bool b_per_channel = false;
  const void* bias = nullptr;      // [n] or null
  const void* residual = nullptr;  // [m, n] row-major, exactly when the kernel has one
  QuantizedActivation activation = QuantizedActivation::kNone;
  const float* y_scale = nullptr;  // one value, exactly when the output is quantized
  void* d = nullptr;  // [m, n] row-major
  int sm_count = 0;
};

// Empty when `gemm` is compiled in and takes the sizes of `args` (CUTLASS's can_implement; the
// pointers are not looked at); otherwise why not.
std::string sm90_quantized_gemm_refusal(const Sm90QuantizedGemm& gemm, const Sm90QuantizedGemmArgs& args);
size_t sm90_quantized_gemm_workspace(const Sm90QuantizedGemm& gemm, const Sm90QuantizedGemmArgs& args);
// Launches one compiled kernel. Not thread-safe: one per tactic (a tactic belongs to one
// execution context).
class Sm90QuantizedGemmLauncher {
 public:
  virtual ~Sm90QuantizedGemmLauncher() = default;
  // Once, before the first launch and outside any stream capture: raises the kernel's
  // shared-memory limit.
  cudaError_t prepare();
  // Launches on `stream`; no allocation, no synchronization (the kernel's parameters are built on
  // the host at the first launch and again only when an address or size changes).
  // cudaErrorInvalidValue for a missing pointer, a residual given to a kernel without one (or none
  // to one with), a gelu_erf activation not the kernel's or too little workspace, cudaErrorMisalignedAddress for a tensor not 16-byte
  // aligned.
  cudaError_t launch(const Sm90QuantizedGemmArgs& args, void* workspace, size_t workspace_bytes, cudaStream_t stream);

 protected:
  virtual cudaError_t set_up() = 0;
  virtual cudaError_t run(const Sm90QuantizedGemmArgs& args, void* workspace, size_t workspace_bytes,
                          cudaStream_t stream) = 0;

 private:
  friend std::unique_ptr<Sm90QuantizedGemmLauncher> make_sm90_quantized_gemm_launcher(const Sm90QuantizedGemm& gemm);
  Sm90QuantizedGemm gemm_;
};

// The launcher of `gemm`'s kernel; null when none is compiled for it.
std::unique_ptr<Sm90QuantizedGemmLauncher> make_sm90_quantized_gemm_launcher(const Sm90QuantizedGemm& gemm);

}  // namespace tensoracle::backends::cuda
