// Fuzzes the .npy parser (header dict, dtype descriptors, byte order, Fortran transposition).
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "tensoracle/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto array = tensoracle::parse_npy(data, size, "fuzz-input");
  if (!array.is_ok()) return 0;
  // An accepted array accounts for every input byte after its header.
  if (array->byte_size() > size) std::abort();
  auto bytes = array->shape().byte_size(array->dtype());
  if (!bytes.is_ok() || static_cast<size_t>(*bytes) != array->byte_size()) std::abort();
  return 0;
}
