// The own-kernel families for computing layers: pointwise chains, softmax, reduce, the norms and
// Q/DQ. Each family is one file made by a factory below, on the KernelFamily base
// (kernel_family.h); op_families.h registers them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/kernels/kernel_family.h"

namespace tensoracle::backends::cuda {

std::shared_ptr<const TacticFamily> make_pointwise_family();      // elementwise, unary, activation, cast, select
std::shared_ptr<const TacticFamily> make_softmax_family();        // kSoftmax "kernel.softmax"
std::shared_ptr<const TacticFamily> make_reduce_family();         // kReduce "kernel.reduce"
std::shared_ptr<const TacticFamily> make_layer_norm_family();     // kLayerNorm "kernel.layer_norm"
std::shared_ptr<const TacticFamily> make_rms_norm_family();       // kRmsNorm "kernel.rms_norm"
std::shared_ptr<const TacticFamily> make_group_norm_family();     // kGroupNorm "kernel.group_norm"
std::shared_ptr<const TacticFamily> make_instance_norm_family();  // kInstanceNorm "kernel.instance_norm"
std::shared_ptr<const TacticFamily> make_batch_norm_family();     // kBatchNorm "kernel.batch_norm"
std::shared_ptr<const TacticFamily> make_quantize_family();       // kQuantize "kernel.quantize"
std::shared_ptr<const TacticFamily> make_dequantize_family();     // kDequantize "kernel.dequantize"

}  // namespace tensoracle::backends::cuda
