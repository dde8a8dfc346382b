// What the tests of `tensoracle optimize` share: running the CLI, reading report.json's stages
// and candidates, and whether this build's timings say anything about the engines.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace tensoracle::workflow_testing {

// Under ASan/UBSan the instrumentation's cost differs from candidate to candidate, so stage 4's
// speed-ups there say little about the engines: the sanitized build checks stage 4's form and
// lets its decisions go either way; the release build checks the decisions themselves.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kTimingsAreRepresentative = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
constexpr bool kTimingsAreRepresentative = false;
#else
constexpr bool kTimingsAreRepresentative = true;
#endif
#else
constexpr bool kTimingsAreRepresentative = true;
#endif

using nlohmann::json;

struct CliRun {
  int exit_code;
  std::string output;
};

inline CliRun run(const std::string& command) {
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  std::string output;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline const std::string kSource = TENSORACLE_SOURCE_DIR;

inline const json& stage(const json& report, int n) {
  for (const json& s : report["stages"])
    if (s["stage"] == n) return s;
  static const json none;
  ADD_FAILURE() << "no stage " << n;
  return none;
}

inline const json& candidate(const json& stage, const std::string& name) {
  for (const json& c : stage["candidates"])
    if (c["name"] == name) return c;
  static const json none;
  ADD_FAILURE() << "no candidate " << name << " in stage " << stage["stage"];
  return none;
}

}  // namespace tensoracle::workflow_testing
