// The sm90 kernels of int8 products without the erf GELU (sm90_qgemm_kernel.cuh).
#include "backends/cuda/cutlass/sm90_qgemm_kernel.cuh"

// Input, output, residual, tile, erf GELU.
TENSORACLE_SM90_KERNEL(int8_t, cutlass::half_t, false, kCooperative128x128, false)
TENSORACLE_SM90_KERNEL(int8_t, cutlass::half_t, false, kPingpong64x128, false)
TENSORACLE_SM90_KERNEL(int8_t, cutlass::half_t, false, kPingpong128x128, false)
TENSORACLE_SM90_KERNEL(int8_t, cutlass::half_t, true, kCooperative128x128, false)
TENSORACLE_SM90_KERNEL(int8_t, cutlass::half_t, true, kPingpong64x128, false)
TENSORACLE_SM90_KERNEL(int8_t, cutlass::half_t, true, kPingpong128x128, false)
TENSORACLE_SM90_KERNEL(int8_t, int8_t, false, kCooperative128x128, false)
TENSORACLE_SM90_KERNEL(int8_t, int8_t, false, kPingpong64x128, false)
TENSORACLE_SM90_KERNEL(int8_t, int8_t, false, kPingpong128x128, false)
