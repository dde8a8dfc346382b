// Where the CUDA toolkit's programs are looked for (documented in bundle.h and docs/bundles.md).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/errors.h"
#include "tensoracle/bundle.h"

namespace tensoracle {
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

// Candidates in search order, each with how it was found (for the not-found message).
struct Candidate {
  std::string origin;
  std::string path;  // empty when the origin gave nothing (unset variable)
};

Result<std::string> find_tool(const std::string& tool, const std::string& explicit_path, const char* override_var,
                              const std::vector<Candidate>& extra_first) {
  if (!explicit_path.empty()) {
    if (is_executable_file(explicit_path)) return explicit_path;
    return not_found("{} '{}' (given explicitly) is not an executable file", tool, explicit_path);
  }
  std::vector<Candidate> candidates;
  candidates.push_back({std::string("$") + override_var, env(override_var)});
  candidates.insert(candidates.end(), extra_first.begin(), extra_first.end());
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
  candidates.push_back({"default", "/usr/local/cuda/bin/" + tool});

  std::string searched;
  for (const Candidate& candidate : candidates) {
    if (!candidate.path.empty() && is_executable_file(candidate.path)) return candidate.path;
    searched += "\n  " + candidate.origin + ": " + (candidate.path.empty() ? "(not set)" : candidate.path);
  }
  return not_found("{} not found; searched, in order:{}", tool, searched);
}

}  // namespace

Result<std::string> find_nvcc(const std::string& explicit_path) {
  return find_tool("nvcc", explicit_path, "TENSORACLE_NVCC", {});
}

Result<std::string> find_cuobjdump(const std::string& explicit_path) {
  std::vector<Candidate> beside_nvcc;
  if (auto nvcc = find_nvcc(); nvcc.is_ok()) {
    beside_nvcc.push_back({"beside nvcc", (fs::path(*nvcc).parent_path() / "cuobjdump").string()});
  }
  return find_tool("cuobjdump", explicit_path, "TENSORACLE_CUOBJDUMP", beside_nvcc);
}

}  // namespace tensoracle
