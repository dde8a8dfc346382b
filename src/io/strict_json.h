// JSON parsing for files tensoracle does not trust (safetensors indexes, manifests): nlohmann's
// parser plus the two checks it lacks. It silently keeps the last of duplicate object keys, which
// would let two readers of one file disagree; and nesting depth must be bounded so a hostile file
// cannot exhaust memory or the stack of code walking the result recursively.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "tensoracle/status.h"

namespace tensoracle {

// Parses `text` as one JSON value (strings must be valid UTF-8; only whitespace may follow).
// Rejects duplicate keys within an object and nesting deeper than `max_depth`. Errors are
// kCorruptData and name `source`.
Result<nlohmann::json> parse_strict_json(std::string_view text, const std::string& source,
                                         int max_depth = 64);

// "object", "array", "string", "number", "boolean" or "null".
std::string_view json_type_name(const nlohmann::json& value);

}  // namespace tensoracle
