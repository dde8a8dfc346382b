// Helpers for the bundle tests: scratch directories, copies of the example bundle, manifest edits.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tensoracle/bundle.h"
#include "tensoracle/hashing.h"

namespace tensoracle::testing {

namespace fs = std::filesystem;

// A fresh directory, removed with everything in it at the end of the test.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "tensoracle-bundle-test-XXXXXX").string();
    path_ = mkdtemp(pattern.data()) != nullptr ? fs::path(pattern) : fs::path();
  }
  ~ScratchDir() {
    std::error_code error;
    if (!path_.empty()) fs::remove_all(path_, error);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

inline std::string read_bytes(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

inline void write_bytes(const fs::path& path, const std::string& bytes) {
  fs::create_directories(path.parent_path());
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << bytes;
}

inline const fs::path& example_bundle() {
  static const fs::path path(TENSORACLE_EXAMPLE_BUNDLE);
  return path;
}

// A private copy of the example bundle (sm_86 and sm_90 cubins of elementwise.cu and binary.cu).
inline fs::path copy_example_bundle(const ScratchDir& scratch, const std::string& name = "bundle") {
  const fs::path out = scratch.path() / name;
  fs::copy(example_bundle(), out, fs::copy_options::recursive);
  return out;
}

inline nlohmann::ordered_json read_manifest_json(const fs::path& bundle) {
  return nlohmann::ordered_json::parse(read_bytes(bundle / "manifest.json"));
}
inline void write_manifest_json(const fs::path& bundle, const nlohmann::ordered_json& json) {
  write_bytes(bundle / "manifest.json", json.dump(2));
}

// The manifest entry of the cubin at `path` ("sm_90/elementwise.cubin").
inline nlohmann::ordered_json& cubin_entry(nlohmann::ordered_json& manifest, const std::string& path) {
  for (auto& cubin : manifest["cubins"]) {
    if (cubin["path"] == path) return cubin;
  }
  ADD_FAILURE() << "no cubin " << path << " in the manifest";
  static nlohmann::ordered_json none;
  return none;
}

// Replaces a cubin's bytes and records their true size and SHA-256, so that only the check aimed
// at can fail.
inline void replace_cubin_consistently(const fs::path& bundle, const std::string& path, const std::string& bytes) {
  write_bytes(bundle / path, bytes);
  auto manifest = read_manifest_json(bundle);
  cubin_entry(manifest, path)["size"] = bytes.size();
  cubin_entry(manifest, path)["sha256"] = sha256_hex(bytes);
  write_manifest_json(bundle, manifest);
}

// Checks named `name` in the report; with a subject, only those whose subject ends with it.
inline std::vector<BundleCheck> checks_named(const InspectReport& report, std::string_view name,
                                             const std::string& subject = {}) {
  std::vector<BundleCheck> out;
  for (const BundleCheck& check : report.checks) {
    const bool subject_matches = subject.empty() || (check.subject.size() >= subject.size() &&
                                                     check.subject.compare(check.subject.size() - subject.size(),
                                                                           subject.size(), subject) == 0);
    if (check.name == name && subject_matches) out.push_back(check);
  }
  return out;
}

// The names of the failed checks, "name(subject)", for readable assertion messages.
inline std::vector<std::string> failed_check_names(const InspectReport& report) {
  std::vector<std::string> out;
  for (const BundleCheck& check : report.failures()) out.push_back(check.name + "(" + check.subject + ")");
  return out;
}

}  // namespace tensoracle::testing
