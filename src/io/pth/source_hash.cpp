#include "io/pth/source_hash.h"

#include <sys/mman.h>

#include <algorithm>
#include <exception>

#include "core/errors.h"
#include "tensoracle/hashing.h"

namespace tensoracle::pth {
namespace {

// Between checks of the stop flag: ~10 ms of hashing, so a failed conversion returns promptly.
constexpr size_t kChunk = size_t{16} << 20;

}  // namespace

SourceHash::SourceHash(std::shared_ptr<const MappedFile> file) : file_(std::move(file)) {
  // The hash reads the file front to back exactly once: let the kernel read ahead far (a file not
  // yet in the page cache) and not favour keeping these pages. madvise only changes the advice on
  // the mapping, never its contents, so casting away const is safe; the advice is best-effort.
  if (file_->size() > 0)
    (void)::madvise(const_cast<uint8_t*>(file_->data()), file_->size(), MADV_SEQUENTIAL);
  try {
    result_ = std::async(std::launch::async, [this] { return compute(); });
  } catch (const std::exception&) {
    result_ = std::async(std::launch::deferred, [this] { return compute(); });
  }
}

SourceHash::~SourceHash() { stop_.store(true, std::memory_order_relaxed); }

std::string SourceHash::compute() const {
  Sha256 hash;
  for (size_t at = 0; at < file_->size(); at += kChunk) {
    if (stop_.load(std::memory_order_relaxed)) return {};
    hash.update(file_->data() + at, std::min(kChunk, file_->size() - at));
  }
  return hash.finish_hex();
}

Result<std::string> SourceHash::hex() {
  try {
    return result_.get();
  } catch (const std::exception& error) {
    return io_error("hashing '{}': {}", file_->path(), error.what());
  }
}

}  // namespace tensoracle::pth
