// Parsing and validation of a complete safetensors file held in memory. SafetensorsFile::open
// runs it over its mapping; the fuzz target runs it over arbitrary bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tensoracle/safetensors.h"

namespace tensoracle {

// The reference implementation's limit; real headers are a few MB at most.
constexpr uint64_t kMaxSafetensorsHeaderSize = 100'000'000;

struct SafetensorsLayout {
  std::map<std::string, std::string> metadata;
  std::vector<SafetensorsTensorInfo> tensors;  // ordered by (begin, end)
  // Indices into `tensors`, ordered by name (for lookups).
  std::vector<uint32_t> by_name;
  uint64_t data_offset = 0;  // file offset of the data region: 8 + header length
};

// Validates `size` bytes at `data` as a whole safetensors file (see docs/file-formats.md for the
// rules) and returns its layout. Errors are kCorruptData, start with "'<source>': " and name the
// tensor and field at fault.
Result<SafetensorsLayout> parse_safetensors(const uint8_t* data, size_t size, const std::string& source);

}  // namespace tensoracle
