// Fuzzes the safetensors parser and validator (the whole-file path SafetensorsFile::open takes
// after mapping). Any accepted layout must describe only bytes inside the input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "io/safetensors_header.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto layout = tensoracle::parse_safetensors(data, size, "fuzz-input");
  if (!layout.is_ok()) return 0;
  uint64_t cursor = 0;
  volatile uint8_t sink = 0;
  for (const auto& tensor : layout->tensors) {
    if (tensor.begin != cursor || tensor.end < tensor.begin || layout->data_offset + tensor.end > size) std::abort();
    cursor = tensor.end;
    // Touch the first and last byte: AddressSanitizer catches any range outside the input.
    if (tensor.end > tensor.begin) {
      sink = sink + data[layout->data_offset + tensor.begin];
      sink = sink + data[layout->data_offset + tensor.end - 1];
    }
  }
  if (layout->data_offset + cursor != size || layout->by_name.size() != layout->tensors.size()) std::abort();
  return 0;
}
