// What tensoracle::dcnv2's kernels (dcnv2_kernels.cu, compiled into the library's cubin bundle)
// and their host-side launch (dcnv2_launch.cpp) must agree on: the kernels' symbol names, by which
// the plugin declares them and fetches them from the bundle, and the block shapes the kernels are
// written for. Compiled by nvcc (the bundle) and the host compiler (the library); it includes no
// tensoracle header, so the bundle's compile needs no include path.
#pragma once

namespace tensoracle_plugins {

// extern "C" kernels: the cubin symbol is the name.
inline constexpr const char* kDcnv2Im2colF32 = "tensoracle_dcnv2_im2col_f32";
inline constexpr const char* kDcnv2Im2colF16 = "tensoracle_dcnv2_im2col_f16";
inline constexpr const char* kDcnv2GemmF32 = "tensoracle_dcnv2_gemm_f32";
inline constexpr const char* kDcnv2GemmF16 = "tensoracle_dcnv2_gemm_f16";

inline constexpr int kDcnv2TileM = 64, kDcnv2TileN = 64;  // the output tile of one GEMM block
inline constexpr int kDcnv2F32Threads = 256;              // fp32 GEMM block (each thread a 4x4 block)
inline constexpr int kDcnv2F16Threads = 128;              // fp16 GEMM block (4 warps)
inline constexpr int kDcnv2Im2colThreads = 256, kDcnv2Im2colMaxBlocks = 8192;  // grid-stride im2col

}  // namespace tensoracle_plugins
