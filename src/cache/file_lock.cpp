#include "cache/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/errors.h"

namespace tensoracle {

Result<FileLock> FileLock::acquire(const std::string& path, Wait wait) {
  for (;;) {
    // O_NOFOLLOW: a lock file replaced by a link must not make us create or lock a file elsewhere.
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666);
    if (fd < 0) {
      const int error = errno;
      if (error == ELOOP)
        return io_error("the lock file '{}' is a symbolic link; it is not followed (remove it)", path);
      return io_error("cannot create the lock file '{}': {}", path, std::strerror(error));
    }
    struct stat opened {};
    if (::fstat(fd, &opened) != 0 || !S_ISREG(opened.st_mode)) {
      ::close(fd);
      return io_error("the lock file '{}' is not a regular file (remove it)", path);
    }
    int result;
    do {
      result = ::flock(fd, LOCK_EX | (wait == Wait::kTry ? LOCK_NB : 0));
    } while (result != 0 && errno == EINTR);
    if (result != 0) {
      const int error = errno;
      ::close(fd);
      if (error == EWOULDBLOCK) return FileLock(path, -1);
      return io_error("cannot lock '{}': {}", path, std::strerror(error));
    }
    // The holder before us may have deleted the file we locked; then our lock protects nothing.
    struct stat locked {}, current {};
    if (::fstat(fd, &locked) == 0 && ::lstat(path.c_str(), &current) == 0 && locked.st_ino == current.st_ino &&
        locked.st_dev == current.st_dev)
      return FileLock(path, fd);
    ::close(fd);
  }
}

FileLock::FileLock(FileLock&& other) noexcept : path_(std::move(other.path_)), fd_(other.fd_) { other.fd_ = -1; }

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

FileLock::~FileLock() { release(); }

Status FileLock::remove_and_release() {
  if (fd_ < 0) return Status::ok();
  const int result = ::unlink(path_.c_str());
  const int error = errno;
  release();
  if (result != 0 && error != ENOENT) return io_error("cannot remove the lock file '{}': {}", path_, std::strerror(error));
  return Status::ok();
}

void FileLock::release() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace tensoracle
