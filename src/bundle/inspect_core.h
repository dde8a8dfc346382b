// The checks shared by inspect_bundle (a directory) and inspect_wheel (a zip): everything that
// follows from one manifest.json and the files it names, wherever those files live.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tensoracle/bundle.h"

namespace tensoracle::bundle {

// Cubins and manifests larger than this are refused unread (a corrupt size field or a zip bomb).
inline constexpr uint64_t kMaxBundleFileSize = uint64_t{1} << 30;

// Where a bundle's files come from.
class BundleFiles {
 public:
  virtual ~BundleFiles() = default;
  // Why a lexically safe relative path still leads outside the bundle (a symlink), or nullopt.
  virtual std::optional<std::string> escapes(const std::string& relative_path) const = 0;
  // The file's bytes; kNotFound when it does not exist, other errors when it cannot be read.
  virtual Result<std::string> read(const std::string& relative_path) const = 0;
};

// Runs every check for the bundle whose manifest is `manifest_text`, appending to `checks`.
// `prefix` is put before every subject (the bundle's directory inside a wheel, or empty).
void inspect_manifest(const std::string& manifest_text, const BundleFiles& files, const std::string& prefix,
                      const InspectOptions& options, std::vector<BundleCheck>& checks);

}  // namespace tensoracle::bundle
