// CacheStore::open_or_build: the protocol of docs/cache.md.
//
//   1. Without a lock: a valid entry is a hit (entries only ever appear by atomic rename).
//   2. Otherwise take the key's lock (flock; waits for a builder in another process).
//   3. Under the lock, check again: another process may have just built it.
//   4. Build; write the manifest, then the engine (the engine's rename commits the entry).
//   5. Release the lock; evict least-recently-used entries above the size limit.
// An unwritable cache directory turns steps 2-4 into a build in memory, with a warning.
#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "cache/cache_entry.h"
#include "cache/cache_maintenance.h"
#include "cache/file_lock.h"
#include "core/counted.h"
#include "core/errors.h"
#include "io/atomic_file.h"
#include "io/mapped_file.h"
#include "io/strict_json.h"
#include "tensoracle/cache.h"

namespace tensoracle {
namespace {

using namespace cache_entry;

Status make_directories(const std::string& path) {
  for (size_t slash = path.find('/', 1);; slash = path.find('/', slash + 1)) {
    const std::string prefix = path.substr(0, slash);
    if (::mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST)
      return io_error("cannot create directory '{}': {}", prefix, std::strerror(errno));
    if (slash == std::string::npos) break;
  }
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    return io_error("'{}' is not a directory", path);
  return Status::ok();
}

std::string short_key(const std::string& key) { return key.substr(0, 12); }

std::string join(const std::vector<std::string>& items, size_t limit) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < limit; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > limit) out += fmt::format(" and {} more", items.size() - limit);
  return out;
}

// Why there is no entry for this key: the nearest cached manifest of the same engine and the
// fields it differs in.
std::string explain_miss(const std::string& directory, const std::string& manifest_json,
                         const std::string& engine_name) {
  auto listing = list_directory(directory);
  if (!listing.is_ok() || listing->keys.empty()) return fmt::format("the cache '{}' holds no engines", directory);
  size_t other_engines = 0;
  std::string nearest_key;
  std::vector<std::string> nearest_differences;
  for (const std::string& key : listing->keys) {
    auto stored = MappedFile::open(paths_of(directory, key).manifest, MappedFile::Links::kRefuse);
    if (!stored.is_ok()) continue;
    const std::string_view text(reinterpret_cast<const char*>((*stored)->data()), (*stored)->size());
    auto parsed = parse_strict_json(text, key);
    if (!parsed.is_ok() || !parsed->is_object() || parsed->value("engine_name", std::string()) != engine_name) {
      ++other_engines;
      continue;
    }
    auto differences = manifest_differences(manifest_json, text);
    if (!differences.is_ok()) continue;
    if (nearest_key.empty() || differences->size() < nearest_differences.size()) {
      nearest_key = key;
      nearest_differences = std::move(*differences);
    }
  }
  if (nearest_key.empty())
    return fmt::format("no cached engine named '{}' ({} for other engines)", engine_name,
                       counted(other_engines, "entry", "entries"));
  return fmt::format("nearest cached engine differs in: {} (key {})", join(nearest_differences, 8),
                     short_key(nearest_key));
}

}  // namespace

Result<CacheOpenResult> CacheStore::open_or_build(const KeyManifest& manifest, CachePolicy policy,
                                                  const EngineBuildFn& build) const {
  TO_RETURN_IF_ERROR(settings_);
  const std::string manifest_json = manifest_to_json(manifest);
  const std::string key = cache_key_of_manifest_json(manifest_json);
  const Paths paths = paths_of(directory_, key);
  const std::string& name = manifest.engine_name;
  std::vector<std::string> warnings;

  const auto hit = [&](EngineFile engine, std::string explanation) -> CacheOpenResult {
    touch_used(paths);
    return CacheOpenResult{std::move(engine), key, paths.engine, true, false, 0, std::move(explanation),
                           std::move(warnings)};
  };

  // 1. Lock-free hit.
  std::string unusable;  // why an existing entry cannot be used
  if (policy != CachePolicy::kRebuild) {
    auto engine = open_valid(directory_, key);
    if (engine.is_ok()) return hit(std::move(*engine), fmt::format("reused cached engine {}", short_key(key)));
    if (engine.status().code() != StatusCode::kNotFound) unusable = engine.status().message();
  }

  // 2. The key's lock; its failure means the cache cannot be written here.
  Status writable = make_directories(directory_);
  std::optional<FileLock> lock;
  if (writable.is_ok()) {
    auto acquired = FileLock::acquire(paths.lock, FileLock::Wait::kBlock);
    if (acquired.is_ok())
      lock = std::move(*acquired);
    else
      writable = acquired.status();
  }

  // 3. Check again under the lock.
  if (lock && policy != CachePolicy::kRebuild) {
    auto engine = open_valid(directory_, key);
    if (engine.is_ok())
      return hit(std::move(*engine), fmt::format("reused cached engine {}, built by another process meanwhile",
                                                 short_key(key)));
    unusable = engine.status().code() == StatusCode::kNotFound ? std::string() : engine.status().message();
  }

  std::string explanation;
  if (policy == CachePolicy::kRebuild) {
    explanation = "policy rebuild: built afresh";
  } else if (!unusable.empty()) {
    explanation = fmt::format("the cached engine {} is unusable: {}", short_key(key), unusable);
  } else {
    explanation = "cache miss: " + explain_miss(directory_, manifest_json, name);
  }
  if (policy == CachePolicy::kRequireCached) {
    if (!unusable.empty())
      return corrupt_data("engine '{}' (key {}): {}; policy require-cached does not rebuild", name, key, explanation);
    return not_found("engine '{}' (key {}) is not in the cache '{}' and policy require-cached does not build: {}", name,
                     key, directory_, explanation);
  }
  if (!unusable.empty()) warnings.push_back(explanation + "; rebuilding it");

  // 4. Build, then store.
  if (lock) remove_temporary_files(directory_, key);
  const auto start = std::chrono::steady_clock::now();
  auto built = build();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!built.is_ok()) return built.status().with_context(fmt::format("building engine '{}'", name));
  EngineWriter& writer = *built;
  writer.set_manifest_json(manifest_json);

  Status stored = writable;
  if (stored.is_ok()) stored = remove_irregular_files(paths);
  if (stored.is_ok()) stored = write_file_atomically(paths.manifest, manifest_json.data(), manifest_json.size());
  if (stored.is_ok()) stored = writer.write_file(paths.engine);
  if (!stored.is_ok()) {
    warnings.push_back(fmt::format("the cache directory '{}' cannot be written ({}); the engine was built in memory "
                                   "and is not cached",
                                   directory_, stored.message()));
    TO_ASSIGN_OR_RETURN(const std::string bytes, writer.to_bytes());
    TO_ASSIGN_OR_RETURN(EngineFile engine, EngineFile::from_bytes(bytes.data(), bytes.size(), name + " (in memory)"));
    return CacheOpenResult{std::move(engine), key, "", false, true, seconds, std::move(explanation),
                           std::move(warnings)};
  }
  touch_used(paths);
  auto engine = open_valid(directory_, key);
  if (!engine.is_ok())
    return engine.status().with_context(fmt::format("reading back engine '{}' just written to the cache", name));
  lock.reset();

  // 5. Stay under the size limit (never evicting what was just built).
  if (max_size_bytes_ > 0) {
    auto evicted = evict_least_recently_used(directory_, max_size_bytes_, key);
    if (!evicted.is_ok())
      warnings.push_back("cache eviction failed: " + evicted.status().message());
    else if (!evicted->removed_keys.empty())
      warnings.push_back(fmt::format("evicted {} ({}) to stay under {}",
                                     counted(evicted->removed_keys.size(), "least-recently-used cache entry",
                                             "least-recently-used cache entries"),
                                     format_byte_size(evicted->bytes_freed), format_byte_size(max_size_bytes_)));
  }
  return CacheOpenResult{std::move(*engine), key, paths.engine, false, true, seconds, std::move(explanation),
                         std::move(warnings)};
}

}  // namespace tensoracle
