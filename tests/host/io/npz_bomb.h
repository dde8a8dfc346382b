// Zip bombs in .npz form, built here in milliseconds: an entry whose deflate stream of a few
// kilobytes per GiB really inflates to gigabytes of zeros behind a valid npy header, so a reader
// that believed it would allocate and decompress all of it.
//
// The stream is 1 MiB of zeros compressed once, ending in a full flush (byte-aligned, no reference
// to earlier data), repeated, then a final empty block: a valid raw deflate stream of any length.
// The CRC-32 of the whole is combined from the CRC of the pieces, never computed over gigabytes.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "io/npy_format.h"

namespace tensoracle::testing {

namespace npz_bomb_detail {

inline std::string le(uint64_t value, int bytes) {
  std::string out;
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xFF);
  return out;
}

// Raw deflate of `input` ending with `flush`, from a fresh compressor.
inline std::string deflate_piece(z_stream& stream, const std::string& input, int flush) {
  std::string out;
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
  stream.avail_in = static_cast<uInt>(input.size());
  char buffer[1 << 16];
  do {
    stream.next_out = reinterpret_cast<Bytef*>(buffer);
    stream.avail_out = sizeof buffer;
    deflate(&stream, flush);
    out.append(buffer, sizeof buffer - stream.avail_out);
  } while (stream.avail_out == 0);
  return out;
}

}  // namespace npz_bomb_detail

// One zip entry as it goes into the file: its local header (less the name) and data.
struct ZipEntry {
  std::string name;
  int method = 0;  // 0 stored, 8 deflated
  uint32_t crc = 0;
  uint64_t compressed = 0;
  uint64_t uncompressed = 0;
  std::vector<const std::string*> data;  // the compressed bytes, in pieces (may repeat)
};

inline bool write_zip_entries(const std::string& path, const std::vector<ZipEntry>& entries) {
  using npz_bomb_detail::le;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  std::string central;
  uint64_t offset = 0;
  for (const ZipEntry& e : entries) {
    const std::string sizes = le(e.crc, 4) + le(e.compressed, 4) + le(e.uncompressed, 4) + le(e.name.size(), 2) + le(0, 2);
    const std::string local = le(0x04034b50, 4) + le(20, 2) + le(0, 2) + le(e.method, 2) + le(0, 2) + le(0x21, 2) + sizes + e.name;
    out << local;
    for (const std::string* piece : e.data) out << *piece;
    central += le(0x02014b50, 4) + le(20, 2) + le(20, 2) + le(0, 2) + le(e.method, 2) + le(0, 2) + le(0x21, 2) + sizes +
               le(0, 2) + le(0, 2) + le(0, 2) + le(0, 4) + le(offset, 4) + e.name;
    offset += local.size() + e.compressed;
  }
  out << central << le(0x06054b50, 4) << le(0, 2) << le(0, 2) << le(entries.size(), 2) << le(entries.size(), 2)
      << le(central.size(), 4) << le(offset, 4) << le(0, 2);
  return out.good();
}

// Writes an .npz whose entry "<bomb>.npy" holds the npy header for `shape` of `dtype`, then its
// data as zeros, deflated (the data's byte size must be a multiple of 1 MiB, and the entry under
// 4 GiB, so the zip needs no zip64 records), after the arrays of `stored` (name -> npy bytes,
// e.g. from format_npy_header + data) as stored entries. False on a write error.
inline bool write_npz_bomb(const std::string& path, const std::string& bomb, DataType dtype, const Dims& shape,
                           const std::map<std::string, std::string>& stored = {}) {
  using namespace npz_bomb_detail;  // NOLINT
  constexpr size_t kPiece = size_t{1} << 20;
  const std::string header = format_npy_header(dtype, shape);
  const uint64_t data_bytes = static_cast<uint64_t>(shape.byte_size(dtype).value());
  if (data_bytes % kPiece != 0 || data_bytes + header.size() >= (uint64_t{1} << 32)) return false;

  z_stream stream{};
  deflateInit2(&stream, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY);
  const std::string zeros(kPiece, '\0');
  const std::string head = deflate_piece(stream, header, Z_FULL_FLUSH);
  const std::string piece = deflate_piece(stream, zeros, Z_FULL_FLUSH);
  const std::string tail = deflate_piece(stream, "", Z_FINISH);
  deflateEnd(&stream);

  std::vector<ZipEntry> entries;
  for (const auto& [name, bytes] : stored) {
    const auto crc = crc32(0L, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size()));
    entries.push_back({name + ".npy", 0, static_cast<uint32_t>(crc), bytes.size(), bytes.size(), {&bytes}});
  }
  const uint64_t pieces = data_bytes / kPiece;
  const uLong zeros_crc = crc32(0L, reinterpret_cast<const Bytef*>(zeros.data()), static_cast<uInt>(kPiece));
  uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(header.data()), static_cast<uInt>(header.size()));
  ZipEntry entry{bomb + ".npy", 8, 0, head.size() + pieces * piece.size() + tail.size(), header.size() + data_bytes, {&head}};
  for (uint64_t i = 0; i < pieces; ++i) {
    crc = crc32_combine(crc, zeros_crc, static_cast<z_off_t>(kPiece));
    entry.data.push_back(&piece);
  }
  entry.data.push_back(&tail);
  entry.crc = static_cast<uint32_t>(crc);
  entries.push_back(std::move(entry));
  return write_zip_entries(path, entries);
}

}  // namespace tensoracle::testing
