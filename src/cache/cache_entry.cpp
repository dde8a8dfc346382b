#include "cache/cache_entry.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/errors.h"
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
  if (::access(paths.engine.c_str(), F_OK) != 0 && (errno == ENOENT || errno == ENOTDIR))
    return not_found("no engine file '{}'", paths.engine);
  TO_ASSIGN_OR_RETURN(EngineFile engine, EngineFile::open(paths.engine));
  const std::string embedded_key = cache_key_of_manifest_json(engine.manifest_json());
  if (embedded_key != key)
    return corrupt_data("engine '{}' holds the manifest of key {}, not of its own key (a renamed or misplaced file)",
                        paths.engine, embedded_key);
  auto manifest = MappedFile::open(paths.manifest);
  if (!manifest.is_ok()) {
    if (manifest.status().code() == StatusCode::kNotFound)
      return corrupt_data("cache entry {} has an engine but no manifest file '{}'", key, paths.manifest);
    return manifest.status();
  }
  const std::string_view stored(reinterpret_cast<const char*>((*manifest)->data()), (*manifest)->size());
  if (stored != engine.manifest_json())
    return corrupt_data("cache entry {}: the manifest file '{}' does not match the manifest inside the engine", key,
                        paths.manifest);
  return engine;
}

void touch_used(const Paths& paths) {
  const int fd = ::open(paths.used.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return;
  ::futimens(fd, nullptr);  // now
  ::close(fd);
}

int64_t last_used_ns(const Paths& paths) {
  struct stat info {};
  if (::stat(paths.used.c_str(), &info) != 0 && ::stat(paths.engine.c_str(), &info) != 0) return 0;
  return int64_t{info.st_mtim.tv_sec} * 1000000000 + info.st_mtim.tv_nsec;
}

uint64_t file_size_or_zero(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 ? static_cast<uint64_t>(info.st_size) : 0;
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

void remove_files(const Paths& paths) {
  ::unlink(paths.engine.c_str());
  ::unlink(paths.manifest.c_str());
  ::unlink(paths.used.c_str());
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
