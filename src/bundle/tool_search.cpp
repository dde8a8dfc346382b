// Where the CUDA toolkit's programs are looked for (documented in bundle.h and docs/bundles.md).
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "bundle/tool_search.h"
#include "core/errors.h"
#include "tensoracle/bundle.h"

namespace tensoracle {
namespace bundle {
namespace {

namespace fs = std::filesystem;

bool is_executable_file(const std::string& path) {
  std::error_code error;
  return fs::is_regular_file(path, error) && access(path.c_str(), X_OK) == 0;
}

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

// `tool` inside a Python environment: the bin/ folders of NVIDIA's wheels
// (lib/python3.X/site-packages/nvidia/<package>/bin/), which scripts/setup installs.
std::vector<std::string> in_python_environment(const fs::path& venv, const std::string& tool) {
  std::vector<std::string> found;
  std::error_code error;
  for (const auto& python : fs::directory_iterator(venv / "lib", error)) {
    if (python.path().filename().string().rfind("python3", 0) != 0) continue;
    std::error_code inner;
    for (const auto& package : fs::directory_iterator(python.path() / "site-packages" / "nvidia", inner))
      found.push_back((package.path() / "bin" / tool).string());
  }
  std::sort(found.begin(), found.end());
  return found;
}

// The project's .venv: $VIRTUAL_ENV, then a .venv in the working directory or one above it, then
// in the executable's directory or one above it (a checkout holds one at its root, above its
// build tree).
std::vector<ToolCandidate> python_environment_candidates(const std::string& tool) {
  std::vector<ToolCandidate> candidates;
  const auto add_venv = [&](const std::string& origin, const fs::path& venv) {
    std::error_code error;
    if (!fs::is_directory(venv, error)) return;
    for (const std::string& path : in_python_environment(venv, tool)) candidates.push_back({origin, path});
  };
  if (const std::string active = env("VIRTUAL_ENV"); !active.empty()) add_venv("$VIRTUAL_ENV", active);
  const auto add_upwards = [&](const std::string& origin, fs::path dir) {
    for (; !dir.empty(); dir = dir.parent_path()) {
      add_venv(origin, dir / ".venv");
      if (dir == dir.parent_path()) break;
    }
  };
  std::error_code error;
  const fs::path working = fs::current_path(error);
  if (!error) add_upwards(".venv above the working directory", working);
  const fs::path executable = fs::read_symlink("/proc/self/exe", error);
  if (!error) add_upwards(".venv above the executable", executable.parent_path());
  return candidates;
}

}  // namespace

std::vector<ToolCandidate> tool_search_order(const std::string& tool, const char* override_var,
                                             const std::vector<ToolCandidate>& first) {
  std::vector<ToolCandidate> candidates;
  candidates.push_back({std::string("$") + override_var, env(override_var)});
  candidates.insert(candidates.end(), first.begin(), first.end());
  for (const char* home : {"CUDA_HOME", "CUDA_PATH"}) {
    const std::string root = env(home);
    candidates.push_back({std::string("$") + home + "/bin", root.empty() ? "" : root + "/bin/" + tool});
  }
  const std::string path_var = env("PATH");
  size_t start = 0;
  bool any_path_dir = false;
  while (start <= path_var.size() && !path_var.empty()) {
    const size_t end = std::min(path_var.find(':', start), path_var.size());
    const std::string dir = path_var.substr(start, end - start);
    if (!dir.empty()) {
      candidates.push_back({"$PATH", dir + "/" + tool});
      any_path_dir = true;
    }
    start = end + 1;
  }
  if (!any_path_dir) candidates.push_back({"$PATH", ""});
  const std::vector<ToolCandidate> venv = python_environment_candidates(tool);
  candidates.insert(candidates.end(), venv.begin(), venv.end());
  if (venv.empty()) candidates.push_back({"the project's .venv", ""});
  candidates.push_back({"default", "/usr/local/cuda/bin/" + tool});

  // PATH often repeats a directory, and $CUDA_HOME/bin is often the default.
  std::vector<ToolCandidate> unique;
  std::vector<std::string> seen;
  for (ToolCandidate& candidate : candidates) {
    if (!candidate.path.empty()) {
      const std::string normal = fs::path(candidate.path).lexically_normal().string();
      if (std::find(seen.begin(), seen.end(), normal) != seen.end()) continue;
      seen.push_back(normal);
    }
    unique.push_back(std::move(candidate));
  }
  return unique;
}

Result<std::string> first_executable(const std::string& tool, const std::vector<ToolCandidate>& candidates) {
  std::string searched;
  for (const ToolCandidate& candidate : candidates) {
    if (!candidate.path.empty() && is_executable_file(candidate.path)) return candidate.path;
    searched += "\n  " + candidate.origin + ": " + (candidate.path.empty() ? "(not set)" : candidate.path);
  }
  return not_found("{} not found; searched, in order:{}", tool, searched);
}

}  // namespace bundle

namespace {

Result<std::string> find_tool(const std::string& tool, const std::string& explicit_path, const char* override_var,
                              const std::vector<bundle::ToolCandidate>& first) {
  if (!explicit_path.empty()) {
    if (bundle::is_executable_file(explicit_path)) return explicit_path;
    return not_found("{} '{}' (given explicitly) is not an executable file", tool, explicit_path);
  }
  return bundle::first_executable(tool, bundle::tool_search_order(tool, override_var, first));
}

}  // namespace

Result<std::string> find_nvcc(const std::string& explicit_path) {
  return find_tool("nvcc", explicit_path, "TENSORACLE_NVCC", {});
}

Result<std::string> find_cuobjdump(const std::string& explicit_path) {
  std::vector<bundle::ToolCandidate> beside_nvcc;
  if (auto nvcc = find_nvcc(); nvcc.is_ok()) {
    beside_nvcc.push_back({"beside nvcc", (std::filesystem::path(*nvcc).parent_path() / "cuobjdump").string()});
  }
  return find_tool("cuobjdump", explicit_path, "TENSORACLE_CUOBJDUMP", beside_nvcc);
}

}  // namespace tensoracle
