// Running the CUDA toolkit's command-line tools (nvcc, cuobjdump) and capturing what they print.
#pragma once

#include <string>
#include <vector>

#include "tensoracle/status.h"

namespace tensoracle::bundle {

struct ProcessResult {
  int exit_code = 0;   // the program's exit status; 128 + signal number when a signal ended it
  std::string output;  // stdout and stderr, interleaved as written
};

// Runs argv[0] (a path, not searched in PATH) with the current environment. Safe to call from
// several threads at once. An error means the program could not be started or waited for; a program
// that ran and failed is a ProcessResult with a non-zero exit code.
Result<ProcessResult> run_process(const std::vector<std::string>& argv);

// "nvcc --list-gpu-code" → "'nvcc' '--list-gpu-code'" (for messages).
std::string command_line_text(const std::vector<std::string>& argv);

}  // namespace tensoracle::bundle
