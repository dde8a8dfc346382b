// The sm90 kernels of fp8 e4m3 products with the erf GELU (sm90_qgemm_kernel.cuh).
#include "backends/cuda/cutlass/sm90_qgemm_kernel.cuh"

// Input, output, residual, tile, erf GELU.
TENSORACLE_SM90_KERNEL(cutlass::float_e4m3_t, cutlass::half_t, false, kCooperative128x128, true)
TENSORACLE_SM90_KERNEL(cutlass::float_e4m3_t, cutlass::half_t, false, kPingpong64x128, true)
TENSORACLE_SM90_KERNEL(cutlass::float_e4m3_t, cutlass::float_e4m3_t, false, kCooperative128x128, true)
TENSORACLE_SM90_KERNEL(cutlass::float_e4m3_t, cutlass::float_e4m3_t, false, kPingpong64x128, true)
