// The zip container of torch.save (libzip): finds the archive folder, reads data.pkl, the
// byteorder record and storage records, in memory (nothing is extracted to disk).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "tensoracle/pth.h"
#include "tensoracle/status.h"

namespace tensoracle::pth {

// An owned byte buffer (not zero-initialized: every byte is filled from the archive).
struct RecordBytes {
  std::unique_ptr<uint8_t[]> data;
  size_t size = 0;
};

class TorchArchive {
 public:
  // Opens `path`. Files that are not zip archives are diagnosed: the legacy torch.save format
  // (refused with re-save instructions), a bare pickle, a TorchScript archive, anything else.
  static Result<TorchArchive> open(const std::string& path, const PthLimits& limits);

  TorchArchive(TorchArchive&&) noexcept;
  TorchArchive& operator=(TorchArchive&&) noexcept;
  ~TorchArchive();

  // The folder every entry lives in ("archive" for recent torch, the file stem for older ones).
  const std::string& folder() const;
  bool big_endian() const;
  const std::string& pickle() const;  // data.pkl

  // data/<key>: its uncompressed size, and its bytes.
  Result<uint64_t> storage_size(const std::string& key) const;
  Result<RecordBytes> read_storage(const std::string& key) const;

 private:
  struct Impl;
  explicit TorchArchive(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tensoracle::pth
