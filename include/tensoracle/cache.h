// The engine cache: key manifests, weights content hashes, and the on-disk store.
//
// A cache key is the SHA-256 of a canonical, human-readable key manifest that lists everything
// that affects a build: engine name, graph version and structural hash, the content hash of the
// weights the graph uses, shapes and profiles, builder settings, plugins, GPU, CUDA and library
// versions, tensoracle version, OS and CPU architecture. The manifest is stored beside the engine,
// so a miss can explain itself ("nearest cached engine differs in:
// builder_settings.optimization_level, environment.gpu.name").
//
// The store keeps, per key, in its directory:
//   <key>.engine          the engine file (engine_file.h), written atomically
//   <key>.manifest.json   the key manifest (identical to the one inside the engine)
//   <key>.used            an empty file whose modification time is the last use (for LRU eviction)
//   <key>.lock            the per-key inter-process lock (flock); dies with its holder
// and file-hashes/, the sidecar records of FileHashCache. docs/cache.md describes the protocol.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tensoracle/byte_size.h"
#include "tensoracle/engine_file.h"
#include "tensoracle/environment.h"
#include "tensoracle/safetensors.h"
#include "tensoracle/status.h"

namespace tensoracle {

// ---- Key manifest ----

struct KeyManifest {
  uint32_t format_version = kEngineFormatVersion;
  std::string engine_name;
  std::string graph_version;  // the model author's version string
  std::string graph_hash;     // structural hash of the canonical graph (catches unbumped versions)
  std::string weights_hash;   // weights_content_hash of the tensors the graph uses
  std::vector<OptimizationProfile> profiles;
  // Builder settings in canonical text form (BuilderSettings::to_manifest: "optimization_level":
  // "3", "tf32": "off", ...); every setting that can change the engine belongs here.
  std::map<std::string, std::string> builder_settings;
  std::vector<PluginFingerprint> plugins;  // order does not matter
  // What the graph was imported from, when it was ({"onnx_sha256": ..., "onnx_importer": ...});
  // empty for graph functions, and then absent from the JSON, so their keys do not change.
  std::map<std::string, std::string> source;
  Environment environment;              // probe_environment(backend)
};

// The canonical JSON text: keys sorted, two-space indent, UTF-8. Equal manifests give equal text
// whatever the order fields, profiles' inputs, settings or plugins were filled in.
std::string manifest_to_json(const KeyManifest& manifest);
Result<KeyManifest> manifest_from_json(std::string_view json_text, const std::string& source);

// The cache key: lower-case hex SHA-256 of manifest_to_json(manifest).
std::string cache_key(const KeyManifest& manifest);
// The key of a canonical manifest already in text form.
std::string cache_key_of_manifest_json(std::string_view canonical_json);

// The dotted paths at which two manifests (JSON text) differ, sorted: "builder_settings.optimization_level",
// "environment.gpu.name", "profiles[0].image.max". A field present on one side only counts too.
// Errors when either text is not JSON.
Result<std::vector<std::string>> manifest_differences(std::string_view a_json, std::string_view b_json);

// ---- Weights content hash ----

// Remembers content hashes of large files in sidecar records keyed by the file's identity (path,
// size, modification and change time in ns, inode, device), so an unchanged checkpoint is not
// hashed again. A record is used only while every identity field still matches; a file modified
// less than a second before hashing is not recorded (its timestamp could hide a second write in
// the same clock tick). Records that cannot be written (read-only directory) are skipped.
class FileHashCache {
 public:
  explicit FileHashCache(std::string directory);

  const std::string& directory() const { return directory_; }

  // SHA-256 of the whole file.
  Result<std::string> file_sha256(const std::string& path);
  // SHA-256 of the bytes of every tensor in a safetensors file, by tensor name.
  Result<std::map<std::string, std::string>> tensor_sha256s(const std::string& safetensors_path);

  // How many lookups were served from records, and how many needed hashing.
  int hits() const { return hits_; }
  int misses() const { return misses_; }

 private:
  std::string directory_;
  int hits_ = 0;
  int misses_ = 0;
};

// The content hash of the tensors `names` of `weights`: SHA-256 over each tensor's name, dtype,
// shape and the SHA-256 of its bytes, in name order (duplicates ignored). Tensors not named do
// not affect it. With `sidecar`, per-tensor hashes come from its records where the files are
// unchanged. Errors name a tensor that is not in the weights.
Result<std::string> weights_content_hash(const Weights& weights, const std::vector<std::string>& names,
                                         FileHashCache* sidecar = nullptr);

// ---- Store ----

enum class CachePolicy {
  kReuse,          // use a valid cached engine; build when absent; report and rebuild a corrupt one
  kRebuild,        // always build, replacing the cached engine
  kRequireCached,  // never build; an absent or corrupt engine is an error
};
std::string_view cache_policy_name(CachePolicy policy);  // "reuse", "rebuild", "require-cached"
Result<CachePolicy> parse_cache_policy(std::string_view name);

// $TENSORACLE_CACHE_DIR, else $XDG_CACHE_HOME/tensoracle, else $HOME/.cache/tensoracle (an empty
// XDG_CACHE_HOME or HOME counts as unset, as the XDG specification says). A TENSORACLE_CACHE_DIR
// that is set but empty is an error naming it: a script that meant a directory lost it.
Result<std::string> default_cache_directory();

inline constexpr uint64_t kDefaultCacheMaxSize = uint64_t{20} << 30;

struct CacheOptions {
  std::string directory;  // empty: default_cache_directory()
  // Total size of engines and manifests above which least-recently-used entries are evicted
  // after a build; 0 means no limit. Empty options take $TENSORACLE_CACHE_MAX_SIZE (parsed by
  // parse_byte_size), else kDefaultCacheMaxSize.
  std::optional<uint64_t> max_size_bytes;
};

// Produces the engine for a manifest on a miss. The store sets the writer's manifest to the
// canonical manifest it was asked for.
using EngineBuildFn = std::function<Result<EngineWriter>()>;

struct CacheOpenResult {
  EngineFile engine;            // verified; memory-mapped from the cache when it is stored there
  std::string key;
  std::string engine_path;      // empty when the engine lives only in memory (unwritable cache)
  bool cache_hit = false;       // a stored engine was reused (possibly built by another process)
  bool built = false;           // this call ran the build function
  double build_seconds = 0;
  std::string explanation;      // why it was a hit or a miss; for a miss, the nearest entry's differences
  std::vector<std::string> warnings;  // e.g. a corrupt entry replaced, an unwritable cache
};

struct CacheEntryInfo {
  std::string key;
  std::string engine_name;  // from the manifest; empty when it cannot be read
  uint64_t engine_bytes = 0;
  uint64_t manifest_bytes = 0;
  int64_t last_used_unix_ns = 0;
  std::string manifest_json;  // the stored manifest text
};

struct CacheProblem {
  std::string key;      // or the file name, for a stray file
  std::string reason;
};

struct CachePruneResult {
  std::vector<std::string> removed_keys;
  uint64_t bytes_freed = 0;
  uint64_t bytes_left = 0;
  std::vector<std::string> skipped_keys;  // in use by another process (locked) at the time
};

class CacheStore {
 public:
  // Does not touch the file system; a missing directory is created on the first build. Settings
  // taken from the environment that are wrong ($TENSORACLE_CACHE_DIR set but empty,
  // $TENSORACLE_CACHE_MAX_SIZE not a size) make settings_status() an error naming the variable and
  // its value, and every operation return that error.
  explicit CacheStore(CacheOptions options = {});

  const Status& settings_status() const { return settings_; }
  const std::string& directory() const { return directory_; }
  uint64_t max_size_bytes() const { return max_size_bytes_; }

  // Returns the engine for `manifest` under `policy`, building it with `build` when the policy
  // allows and no valid entry exists. Every engine returned has had its checksum verified and its
  // manifest checked against the key. Concurrent callers (threads or processes) with the same
  // key build once; the others wait for the lock and reuse the result. When the cache directory
  // cannot be written, the engine is built in memory and a warning says so.
  Result<CacheOpenResult> open_or_build(const KeyManifest& manifest, CachePolicy policy,
                                        const EngineBuildFn& build) const;

  // Entries sorted by last use, most recent first.
  Result<std::vector<CacheEntryInfo>> list() const;
  // One entry by its key or a unique prefix of it.
  Result<CacheEntryInfo> info(std::string_view key_or_prefix) const;
  // Re-checks every entry: engine checksum and structure, manifest present and equal to the
  // engine's, key equal to the manifest's hash; also reports orphaned manifests. Empty when all
  // are good.
  Result<std::vector<CacheProblem>> verify() const;
  // Evicts least-recently-used entries until the total is at most `max_size_bytes`; removes
  // leftovers of interrupted writes. Entries locked by another process are skipped.
  Result<CachePruneResult> prune(uint64_t max_size_bytes) const;
  // Removes every entry (prune to zero).
  Result<CachePruneResult> clear() const { return prune(0); }

  // The sidecar hash records kept in this cache (directory()/file-hashes).
  FileHashCache file_hashes() const { return FileHashCache(directory_ + "/file-hashes"); }

 private:
  std::string directory_;
  uint64_t max_size_bytes_ = kDefaultCacheMaxSize;
  Status settings_;
};

}  // namespace tensoracle
