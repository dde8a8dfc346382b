// The zip container of torch.save (libzip): finds the archive folder, reads data.pkl, the
// byteorder record and storage records, in memory (nothing is extracted to disk). Stored entries
// are used in place from a read-only mapping of the file (no copy, and no CRC-32 check: the
// converter records the file's SHA-256 instead); compressed ones are inflated and CRC-checked by
// libzip.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "io/mapped_file.h"
#include "tensoracle/pth.h"
#include "tensoracle/status.h"

namespace tensoracle::pth {

// The bytes of one record: in place in the file's memory mapping (stored entries, as torch
// writes them), or inflated into an owned buffer (compressed entries).
struct RecordBytes {
  const uint8_t* data = nullptr;
  size_t size = 0;
  std::unique_ptr<uint8_t[]> owned;
  std::shared_ptr<const void> mapping;  // keeps the mapping alive
};

class TorchArchive {
 public:
  // Opens `path`. Files that are not zip archives are diagnosed: the legacy torch.save format
  // (refused with re-save instructions), a bare pickle, a TorchScript archive, anything else.
  static Result<TorchArchive> open(const std::string& path, const PthLimits& limits);
  // The same over a mapping the caller already holds (one mapping, faulted in once, shared with
  // whatever else reads the file: the converter's source hash).
  static Result<TorchArchive> open(std::shared_ptr<const MappedFile> mapping, const PthLimits& limits);

  TorchArchive(TorchArchive&&) noexcept;
  TorchArchive& operator=(TorchArchive&&) noexcept;
  ~TorchArchive();

  // The folder every entry lives in ("archive" for recent torch, the file stem for older ones).
  const std::string& folder() const;
  bool big_endian() const;
  const std::string& pickle() const;  // data.pkl
  uint64_t file_size() const;         // of the whole checkpoint

  // data/<key>: its uncompressed size, and its bytes.
  Result<uint64_t> storage_size(const std::string& key) const;
  Result<RecordBytes> read_storage(const std::string& key) const;

 private:
  struct Impl;
  explicit TorchArchive(std::unique_ptr<Impl> impl);
  // open() once the file is known to be a zip archive.
  static Result<TorchArchive> open_zip(std::shared_ptr<const MappedFile> mapping, const PthLimits& limits);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tensoracle::pth
