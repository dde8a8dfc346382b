// The on-disk layout of an engine file (docs/engine-format.md), shared by the reader, the writer
// and the fuzz target. All integers are little-endian.
//
//   header         64 bytes   magic, format version, section count, file size, table offset
//   section table  32 bytes per section: kind, name size, name offset, data offset, data size
//   names          the weight blobs' names, back to back
//   sections       each at a multiple of kEngineAlignment, zero padding between
//   checksum       16 bytes   XXH3-128 (canonical big-endian form) of every byte before it
#pragma once

#include <xxhash.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tensoracle::engine_layout {

inline constexpr char kMagic[8] = {'T', 'O', 'E', 'N', 'G', 'I', 'N', 'E'};
inline constexpr size_t kHeaderSize = 64;
inline constexpr size_t kSectionEntrySize = 32;
inline constexpr size_t kChecksumSize = 16;
// More sections than this is not an engine anyone wrote; refusing early bounds the reader's work.
inline constexpr uint64_t kMaxSections = 1u << 20;

// Header field offsets.
inline constexpr size_t kVersionOffset = 8;        // u32
inline constexpr size_t kSectionCountOffset = 12;  // u32
inline constexpr size_t kFileSizeOffset = 16;      // u64
inline constexpr size_t kTableOffsetOffset = 24;   // u64; bytes 32..63 are reserved, zero

enum class SectionKind : uint32_t {
  kManifest = 1,     // canonical key manifest JSON
  kEnvironment = 2,  // {"environment": {...}, "plugins": [...]}
  kIoTable = 3,      // {"tensors": [...]}
  kPlan = 4,         // the backend's plan, opaque
  kBlob = 5,         // one named weight blob
};

const char* section_kind_name(uint32_t kind);

inline uint32_t load_u32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
inline uint64_t load_u64(const uint8_t* p) { return uint64_t(load_u32(p)) | uint64_t(load_u32(p + 4)) << 32; }
inline void store_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void store_u64(uint8_t* p, uint64_t v) {
  store_u32(p, static_cast<uint32_t>(v));
  store_u32(p + 4, static_cast<uint32_t>(v >> 32));
}

inline uint64_t align_up(uint64_t value, uint64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

using Checksum = std::array<uint8_t, kChecksumSize>;

inline Checksum to_checksum(XXH128_hash_t hash) {
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, hash);
  Checksum out;
  std::memcpy(out.data(), canonical.digest, out.size());
  return out;
}

// The checksum of `size` bytes in one call (reader, fuzz target).
inline Checksum checksum_of(const void* data, size_t size) { return to_checksum(XXH3_128bits(data, size)); }

}  // namespace tensoracle::engine_layout
