// Fuzzes the restricted unpickler and the tensor collector (data.pkl of a .pth checkpoint), and
// the zip directory reader that locates stored records (the same bytes read as an archive).
// Whatever the input, the readers must return a Status — never crash, hang or run anything —;
// every tensor accepted must have a storage, matching size/stride ranks and non-negative offsets
// and strides, so that the bounds check decides the rest; every stored entry found must lie
// inside the input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "io/pth/materialize.h"
#include "io/pth/pickle.h"
#include "io/pth/state_dict.h"
#include "io/pth/zip_offsets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tensoracle;
  if (auto entries = pth::find_stored_entries(data, size); entries.is_ok()) {
    for (const auto& [name, entry] : *entries)
      if (entry.data_offset > size || entry.size > size - entry.data_offset) std::abort();
  }
  PthLimits limits;  // small enough that the limits themselves get exercised
  limits.max_objects = 1 << 16;
  limits.max_stack = 1 << 12;
  limits.max_marks = 64;
  limits.max_memo = 1 << 12;
  limits.max_depth = 64;
  auto unpickled = pth::unpickle(std::string_view(reinterpret_cast<const char*>(data), size), limits);
  if (!unpickled.is_ok()) return 0;
  if (unpickled->root == nullptr) std::abort();
  auto collected = pth::collect_tensors(*unpickled->root, "", limits);
  if (!collected.is_ok()) return 0;
  for (const auto& named : collected->tensors) {
    const pth::TensorRef& t = *named.tensor;
    if (t.storage == nullptr || t.sizes.size() != t.strides.size() || t.offset < 0) std::abort();
    for (size_t d = 0; d < t.sizes.size(); ++d)
      if (t.sizes[d] < 0 || t.strides[d] < 0) std::abort();
    (void)pth::check_tensor_bounds(named.name, t);
  }
  return 0;
}
