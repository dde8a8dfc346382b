// The SHA-256 of a checkpoint file, computed on a thread of its own while the caller reads and
// converts the checkpoint: started before the pickle is parsed, asked for only after the tensor
// data is written, so hashing overlaps both.
#pragma once

#include <atomic>
#include <future>
#include <memory>
#include <string>

#include "io/mapped_file.h"
#include "tensoracle/status.h"

namespace tensoracle::pth {

class SourceHash {
 public:
  // Starts hashing `file` (if no thread can be started, hex() hashes on the caller's thread).
  explicit SourceHash(std::shared_ptr<const MappedFile> file);
  // Not wanted any more (the conversion failed): stops at the next chunk boundary and waits.
  ~SourceHash();
  SourceHash(const SourceHash&) = delete;
  SourceHash& operator=(const SourceHash&) = delete;

  // Waits for the hash: 64 lowercase hex digits. Call at most once.
  Result<std::string> hex();

 private:
  std::string compute() const;

  std::shared_ptr<const MappedFile> file_;
  std::atomic<bool> stop_{false};
  std::future<std::string> result_;  // last: destroyed (and joined) before what it reads
};

}  // namespace tensoracle::pth
