// The files of one cache entry and the checks that make an entry valid. Shared by the store's
// open path and its maintenance commands (list, verify, prune).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensoracle/engine_file.h"
#include "tensoracle/status.h"

namespace tensoracle::cache_entry {

struct Paths {
  std::string engine;
  std::string manifest;
  std::string used;
  std::string lock;
};

Paths paths_of(const std::string& directory, const std::string& key);

// A key is 64 lower-case hex digits (SHA-256).
bool is_key(std::string_view text);

// Opens and checks the entry: the engine verifies (checksum, structure), its embedded manifest
// hashes to `key`, the stored manifest file is byte-for-byte the embedded one, and its sections
// agree with each other and with its backend (check_engine_file, engine/engine_validation.h).
// Errors say which check failed; kNotFound when there is no engine file.
Result<EngineFile> open_valid(const std::string& directory, const std::string& key);

// Marks the entry as used now (modification time of <key>.used). Best effort: a read-only cache
// still serves hits. A link or FIFO in place of the stamp is left alone.
void touch_used(const Paths& paths);

// Last use in ns since the epoch: <key>.used, else the engine's modification time, else 0 (links
// are not followed).
int64_t last_used_ns(const Paths& paths);

// The size of a regular file, 0 when absent or not a regular file (links are not followed).
uint64_t file_size_or_zero(const std::string& path);

// The keys that have an engine file, and the keys that have only a manifest (orphans of an
// interrupted first write).
struct Listing {
  std::vector<std::string> keys;
  std::vector<std::string> orphaned_manifests;
  std::vector<std::string> temporary_files;  // names of leftovers of interrupted atomic writes
  std::vector<std::string> leftover_keys;    // keys with only a .lock or .used file
};
Result<Listing> list_directory(const std::string& directory);

// Deletes an entry's engine (first: without it the entry is gone), manifest and stamp (links
// themselves, never their targets). The caller holds the key's lock. Errors name the file that
// could not be deleted and why ("Permission denied").
Status remove_files(const Paths& paths);

// Deletes the entry's engine and manifest where they are something other than a regular file (a
// link: the link itself; a FIFO), so that storing a rebuilt entry replaces them; the writers
// replace only regular files (output_files.h). The caller holds the key's lock.
Status remove_irregular_files(const Paths& paths);

// The key a temporary file name belongs to (".<key>.engine.tmp-..."), or empty.
std::string key_of_temporary_file(std::string_view name);

// Deletes leftovers of interrupted writes of `key` (".<key>.engine.tmp-..."). The caller holds the
// key's lock, so no writer of that key is running.
void remove_temporary_files(const std::string& directory, const std::string& key);

}  // namespace tensoracle::cache_entry
