// The temporary files of writes in progress, so that a signal handler can remove them
// (remove_temporary_files_now in output_files.h). The registry is a fixed table of slots that the
// handler reads without locks or allocation.
#pragma once

#include <string>

namespace tensoracle {

// Registers `path` (a temporary file just created) for removal on a signal, for as long as the
// object lives. A path that does not fit the table, or a full table, goes unregistered: the write
// still works, only a signal could then leave the file behind.
class TemporaryFileRegistration {
 public:
  explicit TemporaryFileRegistration(const std::string& path);
  ~TemporaryFileRegistration();
  TemporaryFileRegistration(const TemporaryFileRegistration&) = delete;
  TemporaryFileRegistration& operator=(const TemporaryFileRegistration&) = delete;

 private:
  int slot_ = -1;
};

}  // namespace tensoracle
