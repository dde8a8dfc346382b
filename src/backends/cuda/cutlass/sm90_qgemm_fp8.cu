// The sm90 kernels of fp8 e4m3 products without the erf GELU (sm90_qgemm_kernel.cuh); no
// pingpong_128x128 (sm90_qgemm.cu says why).
#include "backends/cuda/cutlass/sm90_qgemm_kernel.cuh"

// Input, output, residual, tile, erf GELU.
TENSORACLE_SM90_KERNEL(cutlass::float_e4m3_t, cutlass::half_t, false, kCooperative128x128, false)
TENSORACLE_SM90_KERNEL(cutlass::float_e4m3_t, cutlass::half_t, false, kPingpong64x128, false)
TENSORACLE_SM90_KERNEL(cutlass::float_e4m3_t, cutlass::half_t, true, kCooperative128x128, false)
TENSORACLE_SM90_KERNEL(cutlass::float_e4m3_t, cutlass::half_t, true, kPingpong64x128, false)
TENSORACLE_SM90_KERNEL(cutlass::float_e4m3_t, cutlass::float_e4m3_t, false, kCooperative128x128, false)
TENSORACLE_SM90_KERNEL(cutlass::float_e4m3_t, cutlass::float_e4m3_t, false, kPingpong64x128, false)
