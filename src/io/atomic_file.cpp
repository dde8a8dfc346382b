#include "io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>

#include "core/errors.h"
#include "io/temporary_files.h"
#include "tensoracle/output_files.h"

namespace tensoracle {
namespace {

std::string errno_text(int error) { return std::strerror(error); }

// Dirty bytes handed to the disk at a time while a file is being written. Large enough that a
// small file (a manifest, an engine header) never pays for it; small enough that writeback of a
// multi-GiB file keeps pace with the writes.
constexpr size_t kWritebackChunk = size_t{8} << 20;

// "dir/name" -> {"dir", "name"}; "name" -> {".", "name"}.
std::pair<std::string, std::string> split_path(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return {".", path};
  if (slash == 0) return {"/", path.substr(1)};
  return {path.substr(0, slash), path.substr(slash + 1)};
}

// A name no other writer (thread or process) is using right now: pid, a process-wide counter and
// the clock. O_EXCL still guards against a clash; the caller retries on EEXIST.
std::string temporary_name(const std::string& directory, const std::string& base) {
  static std::atomic<uint64_t> counter{0};
  const auto ticks = std::chrono::steady_clock::now().time_since_epoch().count();
  return fmt::format("{}/.{}.tmp-{}-{}-{:x}", directory, base, ::getpid(), counter.fetch_add(1),
                     static_cast<uint64_t>(ticks) & 0xFFFFFFu);
}

Status fsync_directory(const std::string& directory) {
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return io_error("cannot open directory '{}' to sync it: {}", directory, errno_text(errno));
  const int result = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  // Some file systems do not support syncing directories; the rename itself has succeeded.
  if (result != 0 && error != EINVAL && error != ENOTSUP)
    return io_error("cannot sync directory '{}': {}", directory, errno_text(error));
  return Status::ok();
}

}  // namespace

Status AtomicFileWriter::write(const void* data, size_t size) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    // Chunks of kWritebackChunk: writeback and progress reports follow a large array as it goes.
    const ssize_t n = ::write(fd_, bytes, std::min(size, kWritebackChunk));
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_error("cannot write '{}': {}", path_, errno_text(errno));
    }
    bytes += n;
    size -= static_cast<size_t>(n);
    advance(static_cast<size_t>(n));
  }
  return Status::ok();
}

Result<size_t> AtomicFileWriter::copy_from(int fd, uint64_t offset, size_t size) {
  size_t copied = 0;
#ifdef __linux__
  while (copied < size) {
    loff_t from = static_cast<loff_t>(offset + copied);
    const ssize_t n = ::copy_file_range(fd, &from, fd_, nullptr, std::min(size - copied, kWritebackChunk), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      // Not possible between these files (other file systems, an old kernel, a file type that
      // cannot be copied): the caller writes the bytes instead.
      if (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP) break;
      return io_error("cannot copy into '{}': {}", path_, errno_text(errno));
    }
    if (n == 0) break;
    copied += static_cast<size_t>(n);
    advance(static_cast<size_t>(n));
  }
#else
  (void)fd;
  (void)offset;
  (void)size;
#endif
  return copied;
}

void AtomicFileWriter::advance(size_t bytes) {
  written_ += bytes;
  if (written_ - writeback_started_ >= kWritebackChunk) {
    start_writeback();
    if (progress_) progress_(written_);
  }
}

// A hint, not a promise: it only starts writeback (it neither waits for it nor makes anything
// durable), and a failure is ignored because the fsync that follows reports any real I/O error.
void AtomicFileWriter::start_writeback() {
#ifdef SYNC_FILE_RANGE_WRITE
  (void)::sync_file_range(fd_, static_cast<off_t>(writeback_started_),
                          static_cast<off_t>(written_ - writeback_started_), SYNC_FILE_RANGE_WRITE);
#endif
  writeback_started_ = written_;
}

Status AtomicFileWriter::overwrite(size_t offset, const void* data, size_t size) {
  if (offset > written_ || size > written_ - offset)
    return invalid_argument("cannot overwrite bytes [{}, {}) of '{}': only {} bytes are written", offset,
                            offset + size, path_, written_);
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::pwrite(fd_, bytes, size, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_error("cannot write '{}': {}", path_, errno_text(errno));
    }
    bytes += n;
    offset += static_cast<size_t>(n);
    size -= static_cast<size_t>(n);
  }
  return Status::ok();
}

Status AtomicFileWriter::write_zeros(size_t count) {
  static const char kZeros[4096] = {};
  while (count > 0) {
    const size_t chunk = count < sizeof kZeros ? count : sizeof kZeros;
    TO_RETURN_IF_ERROR(write(kZeros, chunk));
    count -= chunk;
  }
  return Status::ok();
}

Status write_file_atomically(const std::string& path,
                             const std::function<Status(AtomicFileWriter&)>& write) {
  const auto [directory, base] = split_path(path);
  TO_RETURN_IF_ERROR(check_output_path(path));

  std::string temporary;
  int fd = -1;
  // Registered before the file exists, so that no signal can come between its creation and its
  // registration; retired (at the end of this function) only after it was renamed or removed.
  std::optional<TemporaryFileRegistration> registration;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    temporary = temporary_name(directory, base);
    registration.reset();
    registration.emplace(temporary);
    fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST)
      return io_error("cannot create a temporary file in '{}' to write '{}': {}", directory, path,
                      errno_text(errno));
  }
  if (fd < 0) return io_error("cannot find a free temporary file name in '{}'", directory);

  AtomicFileWriter writer(fd, path);
  Status status = write(writer);
  if (status.is_ok() && ::fsync(fd) != 0)
    status = io_error("cannot sync '{}' to disk: {}", temporary, errno_text(errno));
  if (::close(fd) != 0 && status.is_ok())
    status = io_error("cannot close '{}': {}", temporary, errno_text(errno));
  // Again, just before the rename: something else may have appeared at the path meanwhile.
  if (status.is_ok()) status = check_output_path(path);
  if (status.is_ok() && ::rename(temporary.c_str(), path.c_str()) != 0)
    status = io_error("cannot rename '{}' to '{}': {}", temporary, path, errno_text(errno));
  if (!status.is_ok()) {
    ::unlink(temporary.c_str());
    return status;
  }
  return fsync_directory(directory);
}

Status write_file_atomically(const std::string& path, const void* data, size_t size) {
  return write_file_atomically(path, [&](AtomicFileWriter& writer) { return writer.write(data, size); });
}

}  // namespace tensoracle
