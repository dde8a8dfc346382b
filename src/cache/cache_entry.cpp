#include "cache/cache_entry.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/errors.h"
#include "engine/engine_validation.h"
#include "io/mapped_file.h"
#include "tensoracle/cache.h"

namespace tensoracle::cache_entry {
namespace {

constexpr std::string_view kEngineSuffix = ".engine";
constexpr std::string_view kManifestSuffix = ".manifest.json";

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

// lstat: a link in the cache is looked at, never through.
bool lstat_regular(const std::string& path, struct stat& info) {
  return ::lstat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

Status unlink_entry_file(const std::string& path) {
  if (::unlink(path.c_str()) == 0 || errno == ENOENT) return Status::ok();
  return io_error("cannot remove '{}': {}", path, std::strerror(errno));
}

}  // namespace

Paths paths_of(const std::string& directory, const std::string& key) {
  const std::string base = directory + "/" + key;
  return {base + ".engine", base + ".manifest.json", base + ".used", base + ".lock"};
}

bool is_key(std::string_view text) {
  return text.size() == 64 &&
         std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

Result<EngineFile> open_valid(const std::string& directory, const std::string& key) {
  const Paths paths = paths_of(directory, key);
  struct stat info {};
  if (::lstat(paths.engine.c_str(), &info) != 0 && (errno == ENOENT || errno == ENOTDIR))
    return not_found("no engine file '{}'", paths.engine);
  // Nothing in the cache is followed out of it: a link in place of an entry's file is refused.
  TO_ASSIGN_OR_RETURN(EngineFile engine, EngineFile::open(paths.engine, EngineFile::Links::kRefuse));
  const std::string embedded_key = cache_key_of_manifest_json(engine.manifest_json());
  if (embedded_key != key)
    return corrupt_data("engine '{}' holds the manifest of key {}, not of its own key (a renamed or misplaced file)",
                        paths.engine, embedded_key);
  auto manifest = MappedFile::open(paths.manifest, MappedFile::Links::kRefuse);
  if (!manifest.is_ok()) {
    if (manifest.status().code() == StatusCode::kNotFound)
      return corrupt_data("cache entry {} has an engine but no manifest file '{}'", key, paths.manifest);
    return manifest.status();
  }
  const std::string_view stored(reinterpret_cast<const char*>((*manifest)->data()), (*manifest)->size());
  if (stored != engine.manifest_json())
    return corrupt_data("cache entry {}: the manifest file '{}' does not match the manifest inside the engine", key,
                        paths.manifest);
  // A valid checksum proves the bytes are the ones written, not that they make sense: a cache may
  // be shared or restored from elsewhere. The sections must agree before the entry is a hit.
  TO_RETURN_IF_ERROR(check_engine_file(engine));
  return engine;
}

void touch_used(const Paths& paths) {
  // O_NOFOLLOW: a stamp replaced by a link must not touch the link's target; O_NONBLOCK: nor may
  // a FIFO in its place block the open.
  const int fd = ::open(paths.used.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666);
  if (fd < 0) return;
  struct stat info {};
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode)) ::futimens(fd, nullptr);  // now
  ::close(fd);
}

int64_t last_used_ns(const Paths& paths) {
  struct stat info {};
  if (!lstat_regular(paths.used, info) && !lstat_regular(paths.engine, info)) return 0;
  return int64_t{info.st_mtim.tv_sec} * 1000000000 + info.st_mtim.tv_nsec;
}

uint64_t file_size_or_zero(const std::string& path) {
  struct stat info {};
  return lstat_regular(path, info) ? static_cast<uint64_t>(info.st_size) : 0;
}

Result<Listing> list_directory(const std::string& directory) {
  Listing listing;
  DIR* dir = ::opendir(directory.c_str());
  if (dir == nullptr) {
    if (errno == ENOENT) return listing;  // an empty cache that was never written
    return io_error("cannot list the cache directory '{}': {}", directory, std::strerror(errno));
  }
  std::vector<std::string> manifests;
  std::vector<std::string> others;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    // Only files and links are entries' files (a link is reported and replaced, never followed);
    // a directory is never descended into.
    if (entry->d_type == DT_DIR) continue;
    if (entry->d_type == DT_UNKNOWN) {  // file systems that do not say: ask
      struct stat info {};
      if (::lstat((directory + "/" + entry->d_name).c_str(), &info) == 0 && S_ISDIR(info.st_mode)) continue;
    }
    if (ends_with(name, kEngineSuffix) && is_key(name.substr(0, name.size() - kEngineSuffix.size())))
      listing.keys.emplace_back(name.substr(0, name.size() - kEngineSuffix.size()));
    else if (ends_with(name, kManifestSuffix) && is_key(name.substr(0, name.size() - kManifestSuffix.size())))
      manifests.emplace_back(name.substr(0, name.size() - kManifestSuffix.size()));
    else if (starts_with(name, ".") && name.find(".tmp-") != std::string_view::npos)
      listing.temporary_files.emplace_back(name);
    else if ((ends_with(name, ".lock") || ends_with(name, ".used")) && is_key(name.substr(0, name.size() - 5)))
      others.emplace_back(name.substr(0, name.size() - 5));
  }
  ::closedir(dir);
  std::sort(listing.keys.begin(), listing.keys.end());
  for (const std::string& key : manifests)
    if (!std::binary_search(listing.keys.begin(), listing.keys.end(), key)) listing.orphaned_manifests.push_back(key);
  std::sort(others.begin(), others.end());
  others.erase(std::unique(others.begin(), others.end()), others.end());
  for (const std::string& key : others)
    if (!std::binary_search(listing.keys.begin(), listing.keys.end(), key)) listing.leftover_keys.push_back(key);
  return listing;
}

Status remove_irregular_files(const Paths& paths) {
  for (const std::string* path : {&paths.engine, &paths.manifest}) {
    struct stat info;
    if (::lstat(path->c_str(), &info) == 0 && !S_ISREG(info.st_mode)) TO_RETURN_IF_ERROR(unlink_entry_file(*path));
  }
  return Status::ok();
}

Status remove_files(const Paths& paths) {
  TO_RETURN_IF_ERROR(unlink_entry_file(paths.engine));
  TO_RETURN_IF_ERROR(unlink_entry_file(paths.manifest));
  return unlink_entry_file(paths.used);
}

std::string key_of_temporary_file(std::string_view name) {
  if (name.size() < 66 || name[0] != '.' || name[65] != '.') return {};
  const std::string_view key = name.substr(1, 64);
  return is_key(key) ? std::string(key) : std::string();
}

void remove_temporary_files(const std::string& directory, const std::string& key) {
  DIR* dir = ::opendir(directory.c_str());
  if (dir == nullptr) return;
  const std::string engine_prefix = "." + key + ".engine.tmp-";
  const std::string manifest_prefix = "." + key + ".manifest.json.tmp-";
  std::vector<std::string> stale;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string_view name = entry->d_name;
    if (starts_with(name, engine_prefix) || starts_with(name, manifest_prefix)) stale.emplace_back(name);
  }
  ::closedir(dir);
  for (const std::string& name : stale) ::unlink((directory + "/" + name).c_str());
}

}  // namespace tensoracle::cache_entry
