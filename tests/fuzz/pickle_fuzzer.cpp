// Fuzzes the restricted unpickler and the tensor collector (data.pkl of a .pth checkpoint).
// Whatever the input, the reader must return a Status — never crash, hang or run anything — and
// every tensor it accepts must have a storage, matching size/stride ranks and non-negative
// offsets and strides, so that the bounds check decides the rest.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "io/pth/materialize.h"
#include "io/pth/pickle.h"
#include "io/pth/state_dict.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tensoracle;
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
