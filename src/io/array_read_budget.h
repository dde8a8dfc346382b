// ArrayReadOptions applied the same way by the .npy, .npz and safetensors readers: which arrays
// are wanted, the caller's check of each declared dtype and shape, and the byte limit, all before
// any array data is allocated.
#pragma once

#include <string>
#include <vector>

#include "tensoracle/npy.h"

namespace tensoracle {

class ArrayReadBudget {
 public:
  // `path` names the file in errors; `file_bytes` is its size (for the default limit).
  ArrayReadBudget(const std::string& path, const ArrayReadOptions& options, uint64_t file_bytes);

  bool wanted(const std::string& name) const;
  // Runs the caller's check on a wanted array and counts its `bytes` against the limit. Errors do
  // not name the file: the reader adds it.
  Status admit(const std::string& name, DataType dtype, const Dims& shape, uint64_t bytes);
  // After the read: every name of `only` was among `held` (the names of every array in the
  // file), else an error listing them.
  Status check_complete(const std::vector<std::string>& held) const;

 private:
  const std::string& path_;
  const ArrayReadOptions& options_;
  uint64_t file_bytes_;
  uint64_t limit_;
  uint64_t admitted_ = 0;
};

}  // namespace tensoracle
