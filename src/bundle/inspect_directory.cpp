// inspect_bundle: a bundle directory on disk.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bundle/inspect_core.h"
#include "core/errors.h"

namespace tensoracle {
namespace {

namespace fs = std::filesystem;

class DirectoryFiles final : public bundle::BundleFiles {
 public:
  explicit DirectoryFiles(fs::path root) : root_(std::move(root)) {}

  std::optional<std::string> escapes(const std::string& relative_path) const override {
    // Resolve symlinks in every existing component and require the result to stay under the root.
    std::error_code error;
    const fs::path resolved = fs::weakly_canonical(root_ / relative_path, error);
    if (error) return "cannot resolve: " + error.message();
    const auto [root_end, unused] = std::mismatch(root_.begin(), root_.end(), resolved.begin(), resolved.end());
    (void)unused;
    if (root_end != root_.end()) return "a symlink leads outside the bundle (to '" + resolved.string() + "')";
    if (resolved == root_) return std::string("names the bundle directory itself");
    return std::nullopt;
  }

  Result<std::string> read(const std::string& relative_path) const override {
    const fs::path path = root_ / relative_path;
    std::error_code error;
    if (!fs::exists(path, error)) return not_found("'{}' does not exist", relative_path);
    if (!fs::is_regular_file(path, error)) return invalid_argument("'{}' is not a regular file", relative_path);
    const uint64_t size = fs::file_size(path, error);
    if (error) return io_error("cannot stat '{}': {}", relative_path, error.message());
    if (size > bundle::kMaxBundleFileSize) return corrupt_data("'{}' is implausibly large ({} bytes)", relative_path, size);
    std::ifstream file(path, std::ios::binary);
    std::ostringstream bytes;
    bytes << file.rdbuf();
    if (!file) return io_error("cannot read '{}'", relative_path);
    return bytes.str();
  }

 private:
  fs::path root_;  // canonical
};

}  // namespace

Result<InspectReport> inspect_bundle(const std::string& bundle_dir, const InspectOptions& options) {
  std::error_code error;
  const fs::file_status status = fs::status(bundle_dir, error);
  if (!fs::exists(status)) return not_found("bundle directory '{}' does not exist", bundle_dir);
  if (!fs::is_directory(status)) {
    if (fs::path(bundle_dir).filename().string() == kBundleManifestFile)
      return invalid_argument("'{}' is a bundle manifest; pass the bundle directory that holds it ('{}')", bundle_dir,
                              fs::path(bundle_dir).parent_path().string());
    return invalid_argument("'{}' is not a bundle directory: it is {} (a bundle is a directory holding {}; a wheel or "
                            "zip is checked with 'bundle inspect-wheel')",
                            bundle_dir, fs::is_regular_file(status) ? "a regular file" : "not a directory",
                            kBundleManifestFile);
  }
  const fs::path root = fs::canonical(bundle_dir, error);
  if (error) return io_error("cannot resolve '{}': {}", bundle_dir, error.message());

  InspectReport report;
  report.target = bundle_dir;
  DirectoryFiles files(root);
  const std::string manifest_name(kBundleManifestFile);
  std::string manifest_text;
  if (auto reason = files.escapes(manifest_name)) {
    report.checks.push_back({std::string(bundle_checks::kPathSafety), manifest_name, false, *reason});
    return report;
  }
  auto text = files.read(manifest_name);
  if (!text) {
    report.checks.push_back({std::string(bundle_checks::kManifestSchema), manifest_name, false, text.status().message()});
    return report;
  }
  bundle::inspect_manifest(*text, files, "", options, report.checks);
  return report;
}

}  // namespace tensoracle
