// Parsing the index of a sharded safetensors checkpoint (model.safetensors.index.json):
//   {"metadata": {KEY: scalar, ...}, "weight_map": {TENSOR: SHARD_FILE, ...}}
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensoracle/status.h"

namespace tensoracle {

struct SafetensorsIndex {
  // Metadata values as text: strings as they are, other scalars as their JSON text ("123").
  std::map<std::string, std::string> metadata;
  // (tensor, shard file relative to the index), sorted by tensor name, names unique.
  std::vector<std::pair<std::string, std::string>> weight_map;
};

// Parses and checks the index text: an object; "weight_map" present, an object of strings, no
// tensor listed twice, shard names relative and inside the index's directory; "metadata", when
// present, an object of scalars (or null); other top-level keys are ignored. Nesting is bounded
// (64 levels). Errors are kCorruptData and start with "'<source>': ".
Result<SafetensorsIndex> parse_safetensors_index(std::string_view text, const std::string& source);

}  // namespace tensoracle
