// JSON forms of the environment, plugin identities and the I/O table, shared by the engine file
// (its environment and I/O sections) and the key manifest (cache layer). Parsers are strict: every
// field present with its type; errors name the source and the JSON pointer (json_field.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/json_field.h"
#include "tensoracle/engine_file.h"
#include "tensoracle/environment.h"

namespace tensoracle {

nlohmann::json environment_to_json_value(const Environment& environment);
Result<Environment> environment_from_json_value(const JsonField& value);

// Sorted by name (then version), so the order plugins were listed in never changes a key.
nlohmann::json plugins_to_json_value(const std::vector<PluginFingerprint>& plugins);
Result<std::vector<PluginFingerprint>> plugins_from_json_value(const JsonField& value);

nlohmann::json shape_range_to_json_value(const ShapeRange& range);
Result<ShapeRange> shape_range_from_json_value(const JsonField& value);

nlohmann::json io_table_to_json_value(const IoTable& table);
Result<IoTable> io_table_from_json_value(const JsonField& value);

}  // namespace tensoracle
