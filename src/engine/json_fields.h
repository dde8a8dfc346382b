// Typed access to the fields of a JSON object read from a file tensoracle does not trust. Every
// error is kCorruptData and names where the field is ("engine 'x.engine', environment: field
// 'gpu.sm_count' must be an integer, got string").
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "tensoracle/status.h"
#include "tensoracle/types.h"

namespace tensoracle::json_fields {

using nlohmann::json;

// The member `key` of `object` (an object), or an error naming `where` and `key`.
Result<const json*> member(const json& object, const char* key, const std::string& where);

Result<std::string> get_string(const json& object, const char* key, const std::string& where);
Result<int64_t> get_int(const json& object, const char* key, const std::string& where);
Result<bool> get_bool(const json& object, const char* key, const std::string& where);
// A JSON array of integers as Dims (every entry >= -1, rank <= Dims::kMaxRank).
Result<Dims> get_dims(const json& object, const char* key, const std::string& where);

json dims_to_json(const Dims& dims);

}  // namespace tensoracle::json_fields
