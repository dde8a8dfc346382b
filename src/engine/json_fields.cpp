#include "engine/json_fields.h"

#include "core/errors.h"
#include "io/strict_json.h"

namespace tensoracle::json_fields {

Result<const json*> member(const json& object, const char* key, const std::string& where) {
  if (!object.is_object()) return corrupt_data("{}: expected an object, got {}", where, json_type_name(object));
  const auto it = object.find(key);
  if (it == object.end()) return corrupt_data("{}: missing field '{}'", where, key);
  return &*it;
}

Result<std::string> get_string(const json& object, const char* key, const std::string& where) {
  TO_ASSIGN_OR_RETURN(const json* value, member(object, key, where));
  if (!value->is_string())
    return corrupt_data("{}: field '{}' must be a string, got {}", where, key, json_type_name(*value));
  return value->get<std::string>();
}

Result<int64_t> get_int(const json& object, const char* key, const std::string& where) {
  TO_ASSIGN_OR_RETURN(const json* value, member(object, key, where));
  if (value->is_number_unsigned()) {
    const auto number = value->get<uint64_t>();
    if (number > static_cast<uint64_t>(INT64_MAX))
      return corrupt_data("{}: field '{}' is out of range: {}", where, key, number);
    return static_cast<int64_t>(number);
  }
  if (!value->is_number_integer())
    return corrupt_data("{}: field '{}' must be an integer, got {}", where, key, json_type_name(*value));
  return value->get<int64_t>();
}

Result<bool> get_bool(const json& object, const char* key, const std::string& where) {
  TO_ASSIGN_OR_RETURN(const json* value, member(object, key, where));
  if (!value->is_boolean())
    return corrupt_data("{}: field '{}' must be true or false, got {}", where, key, json_type_name(*value));
  return value->get<bool>();
}

Result<Dims> get_dims(const json& object, const char* key, const std::string& where) {
  TO_ASSIGN_OR_RETURN(const json* value, member(object, key, where));
  if (!value->is_array())
    return corrupt_data("{}: field '{}' must be an array of dimensions, got {}", where, key, json_type_name(*value));
  if (value->size() > Dims::kMaxRank)
    return corrupt_data("{}: field '{}' has rank {}, more than the maximum {}", where, key, value->size(),
                        Dims::kMaxRank);
  std::vector<int64_t> dims;
  for (const json& dim : *value) {
    if (!dim.is_number_integer() || dim.get<int64_t>() < -1 ||
        (dim.is_number_unsigned() && dim.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)))
      return corrupt_data("{}: field '{}' holds {}, not a dimension (an integer >= -1)", where, key, dim.dump());
    dims.push_back(dim.get<int64_t>());
  }
  return Dims(std::move(dims));
}

json dims_to_json(const Dims& dims) { return json(dims.values()); }

}  // namespace tensoracle::json_fields
