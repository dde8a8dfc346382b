// The kernels sm90_qgemm.cu dispatches to, named by their template parameters and reached
// through their operations: the kernels themselves (sm90_qgemm_kernel.cuh) are compiled in
// separate files, sm90_qgemm_<group>.cu, which instantiate kernel_ops for each.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "backends/cuda/cutlass/sm90_qgemm.h"

namespace tensoracle::backends::cuda::sm90 {

template <class Input, class Product, class Output, bool kResidual, Sm90GemmTile kTile, bool kGeluErf>
struct Kernel;

struct KernelOps {
  std::string (*refusal)(const Sm90QuantizedGemmArgs&);  // empty when the kernel takes the sizes
  size_t (*workspace)(const Sm90QuantizedGemmArgs&);
  std::unique_ptr<Sm90QuantizedGemmLauncher> (*make_launcher)();
};

template <class K>
const KernelOps& kernel_ops();

}  // namespace tensoracle::backends::cuda::sm90
