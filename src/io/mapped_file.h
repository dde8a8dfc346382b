// A read-only memory mapping of a whole file (POSIX mmap), shared by everything that views into it.
//
// The mapping reflects the file on disk: a file truncated by another process while mapped makes
// later reads of the lost pages fault (SIGBUS). Files written through write_file_atomically are
// replaced, never truncated, so mappings of the old file stay valid.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "tensoracle/status.h"

namespace tensoracle {

class MappedFile {
 public:
  enum class Links { kFollow, kRefuse };
  // Maps `path` (a regular file) read-only. An empty file gives an empty mapping. A FIFO or device
  // is refused without reading (or blocking on) it. With Links::kRefuse a symbolic link at `path`
  // is refused too (O_NOFOLLOW): the cache never reads through a link out of its directory.
  static Result<std::shared_ptr<const MappedFile>> open(const std::string& path, Links links = Links::kFollow);

  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const std::string& path() const { return path_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  MappedFile(std::string path, const uint8_t* data, size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}
  std::string path_;
  const uint8_t* data_;
  size_t size_;
};

}  // namespace tensoracle
