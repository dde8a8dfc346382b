// Crash-safe file replacement: write a temporary file beside the target, fsync it, rename it over
// the target, fsync the directory. Readers see the old file or the complete new one, never a
// partial one; after a crash at most a stray ".NAME.tmp-*" file is left in the directory.
//
// Used by every writer that must not leave half-written files behind (safetensors, npy/npz, the
// engine cache, bundles, converters).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "tensoracle/status.h"

namespace tensoracle {

// Sequential writer handed to the callback of write_file_atomically.
class AtomicFileWriter {
 public:
  // Appends `size` bytes (retrying short writes and EINTR).
  Status write(const void* data, size_t size);
  Status write(std::string_view bytes) { return write(bytes.data(), bytes.size()); }
  // Appends `count` zero bytes.
  Status write_zeros(size_t count);
  // Bytes written so far.
  size_t size() const { return written_; }

 private:
  friend Status write_file_atomically(const std::string& path,
                                      const std::function<Status(AtomicFileWriter&)>& write);
  AtomicFileWriter(int fd, const std::string& path) : fd_(fd), path_(path) {}
  int fd_;
  const std::string& path_;  // the final path, for error messages
  size_t written_ = 0;
};

// Creates or replaces `path` with what `write` produces. If `write` or any file operation fails,
// the temporary file is removed, `path` is untouched, and the error is returned. The new file gets
// mode 0666 minus the umask, like a plain open(2).
Status write_file_atomically(const std::string& path,
                             const std::function<Status(AtomicFileWriter&)>& write);

// Convenience form for bytes already in memory.
Status write_file_atomically(const std::string& path, const void* data, size_t size);

}  // namespace tensoracle
