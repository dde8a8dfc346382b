// An exclusive inter-process lock on a lock file (flock). The kernel drops it when the holder's
// process dies, however it dies, so a crashed builder never leaves a lock that blocks others.
//
// Lock files may be deleted by their holder (cache eviction) while others wait on the same file;
// acquire() therefore checks, once it holds the lock, that the path still names the file it
// locked, and starts over otherwise. Two processes can never both believe they hold the lock.
#pragma once

#include <string>

#include "tensoracle/status.h"

namespace tensoracle {

class FileLock {
 public:
  enum class Wait { kBlock, kTry };

  // Creates `path` if needed and locks it. With kTry, returns a lock that is not held() when
  // another process holds it. Errors (kIoError, naming the path and the reason, e.g. "Permission
  // denied") when the file cannot be created or opened, or when `path` is a symbolic link or not a
  // regular file: a lock is never taken through a link.
  static Result<FileLock> acquire(const std::string& path, Wait wait);

  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

  bool held() const { return fd_ >= 0; }
  // Deletes the lock file while still holding it, then releases (always); errors when the file
  // could not be deleted.
  Status remove_and_release();
  void release();

 private:
  FileLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_ = -1;
};

}  // namespace tensoracle
