// list, info, verify, prune and clear.
#include "cache/cache_maintenance.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>

#include "cache/cache_entry.h"
#include "cache/file_lock.h"
#include "core/errors.h"
#include "io/mapped_file.h"
#include "io/strict_json.h"

namespace tensoracle {
namespace {

using namespace cache_entry;

CacheEntryInfo read_entry(const std::string& directory, const std::string& key) {
  const Paths paths = paths_of(directory, key);
  CacheEntryInfo info;
  info.key = key;
  info.engine_bytes = file_size_or_zero(paths.engine);
  info.manifest_bytes = file_size_or_zero(paths.manifest);
  info.last_used_unix_ns = last_used_ns(paths);
  if (auto manifest = MappedFile::open(paths.manifest, MappedFile::Links::kRefuse); manifest.is_ok()) {
    info.manifest_json.assign(reinterpret_cast<const char*>((*manifest)->data()), (*manifest)->size());
    if (auto parsed = parse_strict_json(info.manifest_json, paths.manifest);
        parsed.is_ok() && parsed->is_object() && parsed->contains("engine_name") && (*parsed)["engine_name"].is_string())
      info.engine_name = (*parsed)["engine_name"].get<std::string>();
  }
  return info;
}

// Removes files of `key` that are not a complete entry, if no process holds the key's lock.
// Errors when the cache does not let them be removed (permissions), naming the file.
Status remove_leftovers_of(const std::string& directory, const std::string& key, bool remove_manifest) {
  const Paths paths = paths_of(directory, key);
  auto lock = FileLock::acquire(paths.lock, FileLock::Wait::kTry);
  if (!lock.is_ok()) return lock.status().with_context(fmt::format("cleaning up after cache entry {}", key));
  if (!lock->held()) return Status::ok();  // another process is writing this key right now
  struct stat engine {};
  if (::lstat(paths.engine.c_str(), &engine) != 0) {  // not (or no longer) a complete entry
    for (const std::string* file : {remove_manifest ? &paths.manifest : nullptr, &paths.used}) {
      if (file != nullptr && ::unlink(file->c_str()) != 0 && errno != ENOENT)
        return io_error("cannot remove '{}': {}", *file, std::strerror(errno));
    }
    remove_temporary_files(directory, key);
    return lock->remove_and_release();
  }
  remove_temporary_files(directory, key);
  return Status::ok();
}

}  // namespace

Result<CachePruneResult> evict_least_recently_used(const std::string& directory, uint64_t max_size_bytes,
                                                   const std::string& keep_key) {
  TO_ASSIGN_OR_RETURN(const Listing listing, list_directory(directory));
  for (const std::string& key : listing.orphaned_manifests) TO_RETURN_IF_ERROR(remove_leftovers_of(directory, key, true));
  for (const std::string& key : listing.leftover_keys) TO_RETURN_IF_ERROR(remove_leftovers_of(directory, key, false));
  for (const std::string& name : listing.temporary_files)
    if (const std::string key = key_of_temporary_file(name); !key.empty() && key != keep_key)
      TO_RETURN_IF_ERROR(remove_leftovers_of(directory, key, false));

  struct Candidate {
    std::string key;
    uint64_t bytes;
    int64_t last_used;
  };
  std::vector<Candidate> candidates;
  CachePruneResult result;
  for (const std::string& key : listing.keys) {
    const Paths paths = paths_of(directory, key);
    const uint64_t bytes = file_size_or_zero(paths.engine) + file_size_or_zero(paths.manifest);
    result.bytes_left += bytes;
    candidates.push_back({key, bytes, last_used_ns(paths)});
  }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return a.last_used != b.last_used ? a.last_used < b.last_used : a.key < b.key;
  });
  for (const Candidate& candidate : candidates) {
    if (result.bytes_left <= max_size_bytes) break;
    if (candidate.key == keep_key) continue;
    const Paths paths = paths_of(directory, candidate.key);
    auto lock = FileLock::acquire(paths.lock, FileLock::Wait::kTry);
    // A lock that cannot even be taken is not "in use": the cache cannot be changed here, and
    // the error says why (a read-only cache: "Permission denied").
    if (!lock.is_ok()) return lock.status().with_context(fmt::format("removing cache entry {}", candidate.key));
    if (!lock->held()) {
      result.skipped_keys.push_back(candidate.key);
      continue;
    }
    TO_RETURN_IF_ERROR(remove_files(paths).with_context(fmt::format("removing cache entry {}", candidate.key)));
    remove_temporary_files(directory, candidate.key);
    TO_RETURN_IF_ERROR(lock->remove_and_release());
    result.removed_keys.push_back(candidate.key);
    result.bytes_freed += candidate.bytes;
    result.bytes_left -= candidate.bytes;
  }
  return result;
}

Result<std::vector<CacheEntryInfo>> CacheStore::list() const {
  TO_RETURN_IF_ERROR(settings_);
  TO_ASSIGN_OR_RETURN(const Listing listing, list_directory(directory_));
  std::vector<CacheEntryInfo> entries;
  for (const std::string& key : listing.keys) entries.push_back(read_entry(directory_, key));
  std::sort(entries.begin(), entries.end(), [](const CacheEntryInfo& a, const CacheEntryInfo& b) {
    return a.last_used_unix_ns != b.last_used_unix_ns ? a.last_used_unix_ns > b.last_used_unix_ns : a.key < b.key;
  });
  return entries;
}

Result<CacheEntryInfo> CacheStore::info(std::string_view key_or_prefix) const {
  TO_RETURN_IF_ERROR(settings_);
  if (key_or_prefix.empty()) return invalid_argument("an empty key prefix matches every entry");
  TO_ASSIGN_OR_RETURN(const Listing listing, list_directory(directory_));
  std::vector<std::string> matches;
  for (const std::string& key : listing.keys)
    if (key.compare(0, key_or_prefix.size(), key_or_prefix) == 0) matches.push_back(key);
  if (matches.empty()) return not_found("no cache entry has a key starting with '{}' in '{}'", key_or_prefix, directory_);
  if (matches.size() > 1)
    return invalid_argument("'{}' is the start of {} keys ({}, {}, ...); give more digits", key_or_prefix,
                            matches.size(), matches[0], matches[1]);
  return read_entry(directory_, matches.front());
}

Result<std::vector<CacheProblem>> CacheStore::verify() const {
  TO_RETURN_IF_ERROR(settings_);
  TO_ASSIGN_OR_RETURN(const Listing listing, list_directory(directory_));
  std::vector<CacheProblem> problems;
  for (const std::string& key : listing.keys) {
    auto engine = open_valid(directory_, key);
    if (!engine.is_ok()) problems.push_back({key, engine.status().message()});
  }
  for (const std::string& key : listing.orphaned_manifests)
    problems.push_back({key, fmt::format("manifest '{}' has no engine beside it (an interrupted first build)",
                                         paths_of(directory_, key).manifest)});
  return problems;
}

Result<CachePruneResult> CacheStore::prune(uint64_t max_size_bytes) const {
  TO_RETURN_IF_ERROR(settings_);
  return evict_least_recently_used(directory_, max_size_bytes, "");
}

}  // namespace tensoracle
