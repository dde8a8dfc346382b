// The sm90 stream-K kernels (sm90_qgemm_kernel.cuh), int8 and fp8, without the erf GELU.
#include "backends/cuda/cutlass/sm90_qgemm_kernel.cuh"

// Input, output, residual, tile, erf GELU.
TENSORACLE_SM90_KERNEL(int8_t, cutlass::half_t, false, kStreamK128x128, false)
TENSORACLE_SM90_KERNEL(int8_t, cutlass::half_t, true, kStreamK128x128, false)
TENSORACLE_SM90_KERNEL(int8_t, int8_t, false, kStreamK128x128, false)
TENSORACLE_SM90_KERNEL(cutlass::float_e4m3_t, cutlass::half_t, false, kStreamK128x128, false)
TENSORACLE_SM90_KERNEL(cutlass::float_e4m3_t, cutlass::half_t, true, kStreamK128x128, false)
TENSORACLE_SM90_KERNEL(cutlass::float_e4m3_t, cutlass::float_e4m3_t, false, kStreamK128x128, false)
