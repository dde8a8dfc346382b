// Fuzzes the cubin reader (ELF header, CUDA ABI decoding, section and symbol tables via libelf).
#include <cstddef>
#include <cstdint>

#include "bundle/cubin_elf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto info = tensoracle::bundle::read_cubin(data, size);
  (void)info;
  return 0;
}
