#include "io/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/errors.h"
#include "core/quoted.h"

namespace tensoracle {

Result<std::shared_ptr<const MappedFile>> MappedFile::open(const std::string& path, Links links) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer; it does not change
  // reads of a regular file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | (links == Links::kRefuse ? O_NOFOLLOW : 0));
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT) return not_found("{} does not exist", quote(path));
    if (error == ELOOP && links == Links::kRefuse)
      return invalid_argument("{} is a symbolic link; it is not followed", quote(path));
    if (error == EACCES) return io_error("cannot open {}: permission denied", quote(path));
    return io_error("cannot open {}: {}", quote(path), std::strerror(error));
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int error = errno;
    ::close(fd);
    return io_error("cannot stat '{}': {}", path, std::strerror(error));
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    return invalid_argument("{} is not a regular file", quote(path));
  }
  const size_t size = static_cast<size_t>(info.st_size);
  void* address = nullptr;
  if (size > 0) {
    address = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (address == MAP_FAILED) {
      const int error = errno;
      ::close(fd);
      return io_error("cannot memory-map '{}' ({} bytes): {}", path, size, std::strerror(error));
    }
  }
  ::close(fd);  // the mapping keeps the file alive
  return std::shared_ptr<const MappedFile>(new MappedFile(path, static_cast<const uint8_t*>(address), size));
}

MappedFile::~MappedFile() {
  if (size_ > 0) ::munmap(const_cast<uint8_t*>(data_), size_);
}

}  // namespace tensoracle
