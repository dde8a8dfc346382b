// The matrix-product family "cublaslt.matmul" (cublaslt_families.cpp says how it chooses).
#pragma once

#include <memory>

#include "backends/cuda/cuda_tactic.h"

namespace tensoracle::backends::cuda {

std::shared_ptr<const TacticFamily> make_cublaslt_matmul_family();  // kMatMul

}  // namespace tensoracle::backends::cuda
