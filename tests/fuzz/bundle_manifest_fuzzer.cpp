// Fuzzes the JSON readers of bundles: manifest.json and plugin declarations. Either returns a value
// or an error; nothing else (crash, leak, UB) is acceptable.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tensoracle/bundle.h"
#include "tensoracle/plugin.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto manifest = tensoracle::parse_bundle_manifest(text);
  if (manifest.is_ok()) {
    // What was accepted must serialize and read back.
    auto again = tensoracle::parse_bundle_manifest(tensoracle::bundle_manifest_to_json(*manifest));
    if (!again.is_ok()) __builtin_trap();
    (void)tensoracle::select_cubins_for_device(*manifest, 90);
  }
  auto declaration = tensoracle::plugin_declaration_from_json(text);
  if (declaration.is_ok()) {
    if (!tensoracle::plugin_declaration_from_json(tensoracle::plugin_declaration_to_json(*declaration)).is_ok()) {
      __builtin_trap();
    }
  }
  return 0;
}
