// Fuzzes the safetensors parser and validator (the whole-file path SafetensorsFile::open takes
// after mapping) and the sharded-index parser. Any accepted layout must describe only bytes inside
// the input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "io/safetensors_header.h"
#include "io/safetensors_index.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The same bytes as an index: only its own invariants can be checked.
  auto index = tensoracle::parse_safetensors_index({reinterpret_cast<const char*>(data), size}, "fuzz-index");
  if (index.is_ok())
    for (size_t i = 1; i < index->weight_map.size(); ++i)
      if (!(index->weight_map[i - 1].first < index->weight_map[i].first)) std::abort();

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
