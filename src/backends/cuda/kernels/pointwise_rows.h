// How the row kernels (softmax over the last axis, layer and RMS norm, group and instance norm)
// spread rows of `size` elements over threads: a warp per row with up to 32 values cached per
// lane (rows up to 1024), or a block per row with up to 16 values cached per thread; longer rows
// stream from memory once per pass instead. The variant names are what the families record.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensoracle/status.h"

namespace tensoracle::backends::cuda {

struct RowLaunch {
  bool warp = true;    // a warp per row, else a block per row
  int threads = 128;   // per block
  int per_thread = 0;  // values cached per thread (a power of two); 0: uncached passes
};

// The variants that apply to rows of `size`, the best guess first: "warp" (size <= 1024), then
// "block128" .. "block1024".
std::vector<std::string> row_variants(int64_t size);
// The launch of a variant for rows of `size`; invalid_argument for an unknown variant.
Result<RowLaunch> row_launch(int64_t size, const std::string& variant);

}  // namespace tensoracle::backends::cuda
