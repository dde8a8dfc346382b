// Running the tensoracle CLI from a test: a new process through the shell, its exit status and
// what it printed.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace tensoracle::testing {

struct CliRun {
  int exit_code = -1;  // -1: it did not exit normally (a signal, or the shell could not start)
  std::string output;  // its stdout, and whatever the command line redirects there (2>&1)
};

// Runs `command_line` through /bin/sh.
inline CliRun run_command(const std::string& command_line) {
  CliRun run;
  FILE* pipe = ::popen(command_line.c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) run.output.append(buffer, n);
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

// `tensoracle ARGUMENTS` with stderr joined to stdout.
inline CliRun run_cli(const std::string& arguments) {
  return run_command(std::string(TENSORACLE_CLI_PATH) + " " + arguments + " 2>&1");
}

}  // namespace tensoracle::testing
