// Views: steps that only reinterpret bytes already in the activation arena are dropped, and the
// memory plan (memory_plan.h) gives the view the viewed tensor's offset.
//
//   std::map<uint32_t, uint32_t> views = take_views(net, steps, opt_descs, device, plan.log);
//
//  - A reshape, linear in and out.
//  - A transpose (0, 2, 1, 3) of a rank-4 tensor [B, S, H, D] read only by steps that accept it
//    in the bshd layout where their families declare it (FamilyTraits::bshd_inputs: attention's
//    q, k and v on cuDNN SDPA), the same bytes seen as [B, H, S, D].
//  - A transpose (0, 2, 1, 3) that alone reads the output of a step that accepts writing it in
//    bshd (FamilyTraits::bshd_output), so the transpose's linear output is those very bytes.
// Neither the input nor the output of a view is a network output.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "backends/cuda/planned_step.h"
#include "backends/cuda/run_context.h"

namespace tensoracle::backends::cuda {

// Removes the view steps from `steps` (and sets the bshd layouts of the steps around head
// transposes); returns view tensor -> viewed tensor.
std::map<uint32_t, uint32_t> take_views(const Network& net, std::vector<PlannedStep>& steps,
                                        const std::vector<TensorDesc>& desc, const DeviceInfo& device,
                                        std::vector<std::string>& log);

}  // namespace tensoracle::backends::cuda
