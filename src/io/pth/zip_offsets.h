// Where each stored (uncompressed) zip entry's bytes begin inside the file, so that storage
// records can be used in place from a memory mapping. libzip validates the archive and remains
// the reader of everything else; it does not expose data offsets, hence this small reader of the
// central directory and local headers (zip64 included). Every offset is bounds-checked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "tensoracle/status.h"

namespace tensoracle::pth {

struct StoredEntry {
  uint64_t data_offset = 0;  // from the start of the file
  uint64_t size = 0;
};

// Stored entries by name. Compressed entries are left out (they must be inflated by libzip).
Result<std::map<std::string, StoredEntry>> find_stored_entries(const uint8_t* file, size_t size);

}  // namespace tensoracle::pth
