// Crash-safe file replacement: write a temporary file beside the target, fsync it, rename it over
// the target, fsync the directory. Readers see the old file or the complete new one, never a
// partial one; only a regular file is ever replaced (output_files.h); the temporary file is
// removed on errors and, with remove_temporary_files_on_signals(), on SIGINT/SIGTERM/SIGHUP.
// After a crash at most a stray ".NAME.tmp-*" file is left in the directory.
//
// The one path by which tensoracle writes files (safetensors, npy/npz, the engine cache, bundle
// manifests, converters).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include "tensoracle/status.h"

namespace tensoracle {

// Sequential writer handed to the callback of write_file_atomically.
//
// Large files: once a few MiB are written, the writer asks the kernel to start writing them to
// disk (sync_file_range, where available) while later bytes are still being produced, so the
// final fsync waits only for the tail instead of the whole file.
class AtomicFileWriter {
 public:
  // Appends `size` bytes (retrying short writes and EINTR).
  Status write(const void* data, size_t size);
  Status write(std::string_view bytes) { return write(bytes.data(), bytes.size()); }
  // Appends up to `size` bytes read from the open file `fd` at `offset`, copied inside the kernel
  // (copy_file_range) so they never pass through this process's memory. Returns how many it
  // copied: fewer than `size`, possibly none, where the kernel or the file systems cannot copy
  // between these files or `fd` ends early; the caller appends the rest another way.
  Result<size_t> copy_from(int fd, uint64_t offset, size_t size);
  // Appends `count` zero bytes.
  Status write_zeros(size_t count);
  // Replaces `size` bytes already written, starting at `offset`, without moving the end of the
  // file: for fields whose value is known only after what follows them (a reserved header
  // field, a checksum). `offset + size` must not exceed size().
  Status overwrite(size_t offset, const void* data, size_t size);
  Status overwrite(size_t offset, std::string_view bytes) { return overwrite(offset, bytes.data(), bytes.size()); }
  // Bytes written so far.
  size_t size() const { return written_; }
  // Called with size() every few MiB appended (for progress reports).
  void on_progress(std::function<void(size_t written)> progress) { progress_ = std::move(progress); }

 private:
  friend Status write_file_atomically(const std::string& path,
                                      const std::function<Status(AtomicFileWriter&)>& write);
  AtomicFileWriter(int fd, const std::string& path) : fd_(fd), path_(path) {}
  void advance(size_t bytes);  // counts appended bytes; starts writeback every few MiB
  void start_writeback();

  int fd_;
  const std::string& path_;  // the final path, for error messages
  size_t written_ = 0;
  size_t writeback_started_ = 0;  // bytes [0, this) were handed to start_writeback
  std::function<void(size_t)> progress_;
};

// Creates or replaces `path` with what `write` produces. If `write` or any file operation fails,
// the temporary file is removed, `path` is untouched, and the error is returned. Refuses a path
// that names anything but a regular file (check_output_path), before writing and again before the
// rename. The new file gets mode 0666 minus the umask, like a plain open(2).
Status write_file_atomically(const std::string& path,
                             const std::function<Status(AtomicFileWriter&)>& write);

// Convenience form for bytes already in memory.
Status write_file_atomically(const std::string& path, const void* data, size_t size);

}  // namespace tensoracle
