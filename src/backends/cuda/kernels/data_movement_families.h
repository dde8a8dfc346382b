// The data-movement tactic families (reshape, transpose, concat, slice, pad, gather, iota, top-k,
// resize, grid sample, pooling): one file per family, each made by a factory below on the
// KernelFamily base (kernel_family.h) and registered in op_families.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/cuda/kernels/kernel_family.h"

namespace tensoracle::backends::cuda {

// The families, by the layer kind each implements.
std::shared_ptr<const TacticFamily> make_reshape_family();      // kReshape   "kernel.reshape"
std::shared_ptr<const TacticFamily> make_transpose_family();    // kTranspose "kernel.transpose"
std::shared_ptr<const TacticFamily> make_concat_family();       // kConcat    "kernel.concat"
std::shared_ptr<const TacticFamily> make_slice_family();        // kSlice     "kernel.slice"
std::shared_ptr<const TacticFamily> make_pad_family();          // kPad       "kernel.pad"
std::shared_ptr<const TacticFamily> make_gather_family();       // kGather    "kernel.gather"
std::shared_ptr<const TacticFamily> make_iota_family();         // kIota      "kernel.iota"
std::shared_ptr<const TacticFamily> make_top_k_family();        // kTopK      "kernel.top_k"
std::shared_ptr<const TacticFamily> make_resize_family();       // kResize    "kernel.resize"
std::shared_ptr<const TacticFamily> make_grid_sample_family();  // kGridSample "kernel.grid_sample"
std::shared_ptr<const TacticFamily> make_pooling_family();      // kPooling   "kernel.pooling"

}  // namespace tensoracle::backends::cuda
