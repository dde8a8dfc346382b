// The no-TF32 rule for fp32 kernels, checked on the machine code: cuobjdump -sass disassembles the
// cubin, and any instruction whose mnemonic has a TF32 type (HMMA.1684.F32.TF32 on sm_80..sm_120,
// HGMMA/UTC*MMA ... .TF32 forms on sm_90 and later) means fp32 math ran at reduced precision.
#pragma once

#include <string>
#include <vector>

#include "tensoracle/status.h"

namespace tensoracle::bundle {

// Lines "kernel: instruction" for every TF32 instruction in `cubin`; empty when there are none.
Result<std::vector<std::string>> find_tf32_instructions(const std::string& cuobjdump, const std::string& cubin);

// The same scan over cuobjdump -sass text (split out so that it can be tested without cuobjdump).
std::vector<std::string> scan_sass_for_tf32(const std::string& sass);

}  // namespace tensoracle::bundle
