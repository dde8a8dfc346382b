// Eviction, shared by the store (after a build, to stay under its size limit) and `cache prune`.
#pragma once

#include <string>

#include "tensoracle/cache.h"

namespace tensoracle {

// Removes least-recently-used entries of `directory` until engines and manifests total at most
// `max_size_bytes`, never `keep_key` (the entry just built) nor an entry another process holds
// locked. Also removes leftovers of interrupted writes whose key is not locked. Errors, naming the
// file and the reason, when the directory does not let an entry be locked or removed (a read-only
// cache is not "in use").
Result<CachePruneResult> evict_least_recently_used(const std::string& directory, uint64_t max_size_bytes,
                                                   const std::string& keep_key);

}  // namespace tensoracle
