// Launches tensoracle::dcnv2's bundle kernels (dcnv2_kernels.cu), fetched through
// Plugin::attach_kernels, with the CUDA runtime: the grid and block shapes the kernels are
// written for (dcnv2_kernels.h).
#include <cuda_runtime_api.h>

#include "dcnv2_cuda.h"
#include "dcnv2_kernels.h"

namespace tensoracle_plugins {
namespace {

std::string launch(void* kernel, const char* name, dim3 grid, dim3 block, void** args, cudaStream_t stream) {
  if (kernel == nullptr) return std::string("the kernel ") + name + " was not fetched from the bundle (attach_kernels)";
  const cudaError_t error = cudaLaunchKernel(static_cast<const void*>(kernel), grid, block, args, 0, stream);
  if (error != cudaSuccess)
    return std::string("cudaLaunchKernel(") + name + "): " + cudaGetErrorName(error) + ": " + cudaGetErrorString(error);
  return {};
}

}  // namespace

std::string dcnv2_enqueue_cuda(const Dcnv2Kernels& kernels, Dcnv2Type type, const Dcnv2Geometry& geometry,
                               const Dcnv2DeviceBuffers& buffers, void* stream) noexcept {
  const bool half = type == Dcnv2Type::kFloat16;
  const auto s = static_cast<cudaStream_t>(stream);
  const int64_t tiles_m = (geometry.gemm_m() + kDcnv2TileM - 1) / kDcnv2TileM;
  const int64_t tiles_n = (geometry.out_pixels() + kDcnv2TileN - 1) / kDcnv2TileN;
  const int64_t images_groups = int64_t{geometry.batch} * geometry.groups;
  if (tiles_m > 65535 || images_groups > 65535 || tiles_n > 0x7FFFFFFF)
    return "the GEMM grid (" + std::to_string(tiles_n) + " x " + std::to_string(tiles_m) + " x " +
           std::to_string(images_groups) + " tiles) exceeds CUDA's grid limits";
  Dcnv2Geometry g = geometry;
  const void* x = buffers.x;
  const void* offset = buffers.offset;
  const void* mask = buffers.mask;
  void* columns = buffers.columns;
  void* im2col_args[] = {&g, &x, &offset, &mask, &columns};
  const int64_t blocks = (g.column_elements() + kDcnv2Im2colThreads - 1) / kDcnv2Im2colThreads;
  const dim3 im2col_grid(static_cast<unsigned>(blocks < kDcnv2Im2colMaxBlocks ? blocks : kDcnv2Im2colMaxBlocks));
  std::string error = launch(kernels.im2col, half ? kDcnv2Im2colF16 : kDcnv2Im2colF32, im2col_grid,
                             dim3(kDcnv2Im2colThreads), im2col_args, s);
  if (!error.empty()) return error;

  const void* weight = buffers.weight;
  const void* bias = buffers.bias;
  const void* columns_in = buffers.columns;
  void* y = buffers.y;
  void* gemm_args[] = {&g, &weight, &bias, &columns_in, &y};
  const dim3 gemm_grid(static_cast<unsigned>(tiles_n), static_cast<unsigned>(tiles_m), static_cast<unsigned>(images_groups));
  return launch(kernels.gemm, half ? kDcnv2GemmF16 : kDcnv2GemmF32, gemm_grid,
                dim3(half ? kDcnv2F16Threads : kDcnv2F32Threads), gemm_args, s);
}

}  // namespace tensoracle_plugins
