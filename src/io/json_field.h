// Typed, checked access to a JSON document read by the strict reader (strict_json.h). A JsonField
// is a value plus where it is: the source (a file, or "engine 'x', I/O table") and its JSON
// pointer. Every error names both and shows the bad value:
//
//   limits.json: /outputs/probs/atol: expected a number >= 0, got -1
//   engine 'e.engine', environment: /gpu: missing field 'sm_count'
//
// Errors carry the code given at the root (kCorruptData for files tensoracle wrote, kInvalidArgument
// for files a user writes). A JsonField borrows the document; it must outlive the field.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "core/errors.h"
#include "tensoracle/status.h"
#include "tensoracle/types.h"

namespace tensoracle {

class JsonField {
 public:
  JsonField(const nlohmann::json& value, std::string source, StatusCode code = StatusCode::kCorruptData)
      : value_(&value), source_(std::move(source)), code_(code) {}

  const nlohmann::json& json() const { return *value_; }
  const std::string& source() const { return source_; }
  // RFC 6901: "" for the root, "/layers/3/name" below it.
  const std::string& pointer() const { return pointer_; }
  // "<source>: <pointer>", or the source alone at the root; the pointer's non-printable bytes
  // escaped.
  std::string where() const;

  // An error at this field: "<where>: <message>".
  template <typename... Args>
  Status error(fmt::format_string<Args...> format, Args&&... args) const {
    return Status(code_, where() + ": " + fmt::format(format, std::forward<Args>(args)...));
  }

  bool is_null() const { return value_->is_null(); }

  // --- objects ---
  Status require_object() const;
  // An object whose every key is one of `known` ("unknown key 'x' (known keys: a, b)"): a typo in
  // a hand-written file is an error, not a silently ignored field.
  Status allow_keys(std::initializer_list<std::string_view> known) const;
  // The member `key` of this object; an error when this is not an object or the key is absent.
  Result<JsonField> member(std::string_view key) const;
  // The member `key` when present; an error only when this is not an object.
  Result<std::optional<JsonField>> optional_member(std::string_view key) const;

  // --- arrays ---
  // The element count of this array, at most `max_size`.
  Result<size_t> array_size(size_t max_size = std::numeric_limits<size_t>::max()) const;
  // Element `index` (< array_size()).
  JsonField element(size_t index) const;

  // --- values ---
  Result<std::string> as_string() const;
  // A string that names something (a tensor, a layer, a file): not empty.
  Result<std::string> as_name() const;
  Result<int64_t> as_int(int64_t min = std::numeric_limits<int64_t>::min(),
                         int64_t max = std::numeric_limits<int64_t>::max()) const;
  Result<uint64_t> as_uint(uint64_t max = std::numeric_limits<uint64_t>::max()) const;
  // Any number, integer or not, within [min, max] (always finite: the reader refuses overflow).
  Result<double> as_number(double min = -std::numeric_limits<double>::max(),
                           double max = std::numeric_limits<double>::max()) const;
  Result<bool> as_bool() const;
  // An array of dimensions: integers >= -1 (-1: dynamic), at most Dims::kMaxRank of them.
  Result<Dims> as_dims() const;

  // --- members, shorthand for member(key) then as_...() ---
  Result<std::string> get_string(std::string_view key) const;
  Result<std::string> get_name(std::string_view key) const;
  Result<int64_t> get_int(std::string_view key, int64_t min = std::numeric_limits<int64_t>::min(),
                          int64_t max = std::numeric_limits<int64_t>::max()) const;
  Result<uint64_t> get_uint(std::string_view key, uint64_t max = std::numeric_limits<uint64_t>::max()) const;
  Result<double> get_number(std::string_view key) const;
  Result<bool> get_bool(std::string_view key) const;
  Result<Dims> get_dims(std::string_view key) const;

  // "object", "array", "string", "number", "boolean" or "null".
  std::string_view type_name() const;
  // The value as JSON text for a message, shortened past ~80 characters.
  std::string shown() const;

 private:
  JsonField child(const nlohmann::json& value, std::string_view token) const;

  const nlohmann::json* value_;
  std::string source_;
  StatusCode code_;
  std::string pointer_;
};

// "object", "array", ... for a bare value (json_type_name(doc["x"])).
std::string_view json_type_name(const nlohmann::json& value);

// `token` escaped for a JSON pointer ("~" -> "~0", "/" -> "~1").
std::string json_pointer_token(std::string_view token);

}  // namespace tensoracle
