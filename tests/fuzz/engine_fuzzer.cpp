// Fuzzes the engine loader. Random bytes almost never pass the checksum, so each input is also
// tried with its size field and checksum repaired: that reaches the section table, name, bounds
// and JSON checks behind the checksum, which must reject lies without reading out of bounds.
#include <cstdint>
#include <cstring>
#include <vector>

#include "engine/engine_layout.h"
#include "tensoracle/engine_file.h"

using namespace tensoracle;

namespace {

void exercise(const EngineFile& engine) {
  volatile size_t sink = engine.manifest_json().size() + engine.plan().size + engine.io_table().tensors.size();
  for (const EngineBlobInfo& info : engine.blobs()) {
    auto blob = engine.blob(info.name);
    if (blob.is_ok() && blob->size > 0) sink = sink + blob->data[0] + blob->data[blob->size - 1];
  }
  (void)check_engine_compatibility(engine, engine.environment(), engine.required_plugins());
  (void)sink;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace engine_layout;
  if (auto engine = EngineFile::from_bytes(data, size, "fuzz.engine"); engine.is_ok()) exercise(*engine);
  if (size < kHeaderSize + kChecksumSize) return 0;
  std::vector<uint8_t> repaired(data, data + size);
  store_u64(repaired.data() + kFileSizeOffset, size);
  const Checksum checksum = checksum_of(repaired.data(), size - kChecksumSize);
  std::memcpy(repaired.data() + size - kChecksumSize, checksum.data(), kChecksumSize);
  if (auto engine = EngineFile::from_bytes(repaired.data(), size, "fuzz.engine"); engine.is_ok()) exercise(*engine);
  return 0;
}
