// check_output_path: what a path names, and whether it is one of the inputs.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/errors.h"
#include "tensoracle/output_files.h"

namespace tensoracle {
namespace {

const char* file_type_name(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

std::string link_target(const std::string& path) {
  char target[4096];
  const ssize_t n = ::readlink(path.c_str(), target, sizeof target - 1);
  return n < 0 ? std::string("?") : std::string(target, static_cast<size_t>(n));
}

std::string directory_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

Status check_output_path(const std::string& path, const std::vector<std::string>& inputs) {
  if (path.empty()) return invalid_argument("the output path is empty");
  if (path.back() == '/') return invalid_argument("cannot write '{}': the path names a directory", path);
  struct stat target;
  if (::lstat(path.c_str(), &target) != 0) {
    if (errno != ENOENT) return io_error("cannot write '{}': {}", path, std::strerror(errno));
    const std::string directory = directory_of(path);
    struct stat parent;
    if (::stat(directory.c_str(), &parent) != 0)
      return io_error("cannot write '{}': its directory '{}' does not exist", path, directory);
    if (!S_ISDIR(parent.st_mode))
      return invalid_argument("cannot write '{}': '{}' is not a directory", path, directory);
    return Status::ok();
  }
  if (S_ISLNK(target.st_mode))
    return invalid_argument("cannot write '{}': it is a symbolic link (to '{}'); tensoracle replaces only regular "
                            "files, so name the link's target instead",
                            path, link_target(path));
  if (!S_ISREG(target.st_mode))
    return invalid_argument("cannot write '{}': it is {}; tensoracle writes only regular files (a new one, or one it "
                            "replaces)",
                            path, file_type_name(target.st_mode));
  for (const std::string& input : inputs) {
    struct stat source;
    if (::stat(input.c_str(), &source) == 0 && source.st_dev == target.st_dev && source.st_ino == target.st_ino)
      return invalid_argument("cannot write '{}': it is the input '{}'; choose another output path", path, input);
  }
  return Status::ok();
}

}  // namespace tensoracle
