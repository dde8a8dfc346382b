// The search order behind find_nvcc and find_cuobjdump (bundle.h), apart so tests can see it.
#pragma once

#include <string>
#include <vector>

#include "tensoracle/status.h"

namespace tensoracle::bundle {

struct ToolCandidate {
  std::string origin;  // "$PATH", "$CUDA_HOME/bin", ".venv above the working directory", ...
  std::string path;    // empty when the origin gave nothing (an unset variable)
};

// Every place `tool` is looked for, in order: $`override_var`, `first`, $CUDA_HOME/bin,
// $CUDA_PATH/bin, each directory of $PATH, NVIDIA's wheels in the project's Python environment
// ($VIRTUAL_ENV, a .venv in or above the working directory, a .venv in or above the executable's
// directory), /usr/local/cuda/bin. Each file appears once, under the first origin that names it.
std::vector<ToolCandidate> tool_search_order(const std::string& tool, const char* override_var,
                                             const std::vector<ToolCandidate>& first);

// The first of `candidates` that is an executable file; the not-found error lists every one, in
// order, with its origin.
Result<std::string> first_executable(const std::string& tool, const std::vector<ToolCandidate>& candidates);

}  // namespace tensoracle::bundle
