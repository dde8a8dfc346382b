// inspect_wheel: every bundle inside a wheel (a zip), read in place with libzip.
#include <sys/stat.h>
#include <zip.h>

#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "bundle/inspect_core.h"
#include "plugin/bundle_path_safety.h"
#include "core/counted.h"
#include "core/errors.h"
#include "io/zip_open.h"

namespace tensoracle {
namespace {

namespace names = bundle_checks;

struct ZipCloser {
  void operator()(zip_t* archive) const { zip_discard(archive); }  // read-only: never write back
};
struct ZipFileCloser {
  void operator()(zip_file_t* file) const { zip_fclose(file); }
};

struct Entry {
  zip_uint64_t index = 0;
  zip_uint64_t size = 0;
  bool symlink = false;
};

class ZipFiles final : public bundle::BundleFiles {
 public:
  ZipFiles(zip_t* archive, const std::map<std::string, Entry>& entries, std::string prefix)
      : archive_(archive), entries_(entries), prefix_(std::move(prefix)) {}

  std::optional<std::string> escapes(const std::string& relative_path) const override {
    const auto it = entries_.find(prefix_ + relative_path);
    if (it != entries_.end() && it->second.symlink) return std::string("a symlink entry in the archive");
    return std::nullopt;
  }

  Result<std::string> read(const std::string& relative_path) const override {
    const std::string name = prefix_ + relative_path;
    const auto it = entries_.find(name);
    if (it == entries_.end()) return not_found("'{}' is not in the archive", name);
    if (it->second.size > bundle::kMaxBundleFileSize) {
      return corrupt_data("'{}' is implausibly large ({} bytes uncompressed)", name, it->second.size);
    }
    std::unique_ptr<zip_file_t, ZipFileCloser> file(zip_fopen_index(archive_, it->second.index, 0));
    if (!file) return corrupt_data("cannot open '{}' in the archive: {}", name, zip_strerror(archive_));
    std::string bytes(it->second.size, '\0');
    zip_uint64_t done = 0;
    while (done < bytes.size()) {
      const zip_int64_t n = zip_fread(file.get(), bytes.data() + done, bytes.size() - done);
      if (n < 0) return corrupt_data("cannot read '{}' from the archive: {}", name, zip_file_strerror(file.get()));
      if (n == 0) return corrupt_data("'{}' ends after {} of {} bytes", name, done, bytes.size());
      done += static_cast<zip_uint64_t>(n);
    }
    // libzip verifies the entry's CRC-32 when it reaches the end of the data: read up to there.
    char extra = 0;
    const zip_int64_t tail = zip_fread(file.get(), &extra, 1);
    if (tail < 0) return corrupt_data("cannot read '{}' from the archive: {}", name, zip_file_strerror(file.get()));
    if (tail > 0) return corrupt_data("'{}' is longer than its recorded size", name);
    return bytes;
  }

 private:
  zip_t* archive_;
  const std::map<std::string, Entry>& entries_;
  std::string prefix_;
};

bool is_symlink_entry(zip_t* archive, zip_uint64_t index) {
  zip_uint8_t system = 0;
  zip_uint32_t attributes = 0;
  if (zip_file_get_external_attributes(archive, index, 0, &system, &attributes) != 0) return false;
  return system == ZIP_OPSYS_UNIX && ((attributes >> 16) & S_IFMT) == S_IFLNK;
}

}  // namespace

Result<InspectReport> inspect_wheel(const std::string& wheel_path, const InspectOptions& options) {
  std::error_code fs_error;
  const auto status = std::filesystem::status(wheel_path, fs_error);
  if (!std::filesystem::exists(status)) return not_found("wheel '{}' does not exist", wheel_path);
  if (std::filesystem::is_directory(status))
    return invalid_argument("'{}' is a directory, not a wheel or zip (a bundle directory is checked with 'bundle inspect')",
                            wheel_path);
  if (!std::filesystem::is_regular_file(status)) return invalid_argument("'{}' is not a regular file", wheel_path);
  InspectReport report;
  report.target = wheel_path;
  auto& checks = report.checks;

  int error_code = 0;
  std::unique_ptr<zip_t, ZipCloser> archive(open_zip_read_only(wheel_path, &error_code));
  if (!archive) {
    zip_error_t error;
    zip_error_init_with_code(&error, error_code);
    checks.push_back({std::string(names::kWheelArchive), wheel_path, false,
                      std::string("not a readable zip archive: ") + zip_error_strerror(&error)});
    zip_error_fini(&error);
    return report;
  }
  const zip_int64_t count = zip_get_num_entries(archive.get(), 0);
  checks.push_back({std::string(names::kWheelArchive), wheel_path, true, "zip with " + counted(static_cast<uint64_t>(count), "entry", "entries")});

  // Every entry name is checked, not only the bundles' files: an installer extracts them all.
  std::map<std::string, Entry> entries;
  size_t unsafe = 0;
  for (zip_int64_t i = 0; i < count; ++i) {
    const auto index = static_cast<zip_uint64_t>(i);
    zip_stat_t stat;
    if (zip_stat_index(archive.get(), index, ZIP_FL_ENC_RAW, &stat) != 0 || (stat.valid & ZIP_STAT_NAME) == 0) {
      checks.push_back({std::string(names::kWheelArchive), fmt::format("entry {}", i), false, "unreadable entry"});
      continue;
    }
    const std::string name = stat.name;
    std::optional<std::string> reason = bundle::unsafe_path_reason(name, /*allow_trailing_slash=*/true);
    const bool symlink = is_symlink_entry(archive.get(), index);
    if (!reason && symlink) reason = "a symlink entry (an installer could write through it)";
    if (!reason && entries.count(name) != 0) reason = "appears twice in the archive";
    if (reason) {
      ++unsafe;
      checks.push_back({std::string(names::kWheelEntryPath), name, false, *reason});
      continue;
    }
    entries[name] = Entry{index, (stat.valid & ZIP_STAT_SIZE) ? stat.size : 0, symlink};
  }
  if (unsafe == 0) {
    checks.push_back({std::string(names::kWheelEntryPath), wheel_path, true,
                      fmt::format("all {} entry names are safe relative paths", count)});
  }

  std::vector<std::string> prefixes;
  const std::string manifest_name(kBundleManifestFile);
  for (const auto& [name, entry] : entries) {
    if (name == manifest_name) {
      prefixes.emplace_back();
    } else if (name.size() > manifest_name.size() && name.compare(name.size() - manifest_name.size() - 1,
                                                                   std::string::npos, "/" + manifest_name) == 0) {
      prefixes.push_back(name.substr(0, name.size() - manifest_name.size()));
    }
  }
  checks.push_back({std::string(names::kWheelBundles), wheel_path, !prefixes.empty(),
                    prefixes.empty() ? "no manifest.json inside: the archive holds no bundle"
                                     : fmt::format("{} bundle(s)", prefixes.size())});
  for (const std::string& prefix : prefixes) {
    ZipFiles files(archive.get(), entries, prefix);
    auto text = files.read(manifest_name);
    if (!text) {
      checks.push_back({std::string(names::kManifestSchema), prefix + manifest_name, false, text.status().message()});
      continue;
    }
    bundle::inspect_manifest(*text, files, prefix, options, checks);
  }
  return report;
}

}  // namespace tensoracle
