#include "io/json_field.h"

#include <cmath>

#include "core/quoted.h"

namespace tensoracle {

using nlohmann::json;

std::string_view json_type_name(const json& value) {
  switch (value.type()) {
    case json::value_t::object: return "object";
    case json::value_t::array: return "array";
    case json::value_t::string: return "string";
    case json::value_t::boolean: return "boolean";
    case json::value_t::null: return "null";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return "number";
    default: return "binary";
  }
}

namespace {

// "an integer", "an integer >= 0", "an integer in [1, 8]": the default bounds go unsaid.
template <typename T>
std::string range_text(const char* what, T min, T max, T lowest, T highest) {
  if (min == lowest && max == highest) return what;
  if (max == highest) return fmt::format("{} >= {}", what, min);
  if (min == lowest) return fmt::format("{} <= {}", what, max);
  return fmt::format("{} in [{}, {}]", what, min, max);
}

std::string int_range(int64_t min, int64_t max) {
  return range_text<int64_t>("an integer", min, max, std::numeric_limits<int64_t>::min(),
                             std::numeric_limits<int64_t>::max());
}

}  // namespace

std::string json_pointer_token(std::string_view token) {
  std::string out;
  for (const char c : token) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

std::string JsonField::where() const {
  // The source is tensoracle's own text (untrusted names in it are quoted already); the pointer
  // holds keys read from the file.
  return pointer_.empty() ? source_ : source_ + ": " + printable(pointer_);
}

JsonField JsonField::child(const nlohmann::json& value, std::string_view token) const {
  JsonField out(value, source_, code_);
  out.pointer_ = pointer_ + "/" + json_pointer_token(token);
  return out;
}

std::string_view JsonField::type_name() const { return json_type_name(*value_); }

std::string JsonField::shown() const {
  constexpr size_t kMaxShown = 80;
  // replace: a value built in code (not parsed) may hold invalid UTF-8; showing it must not throw.
  std::string text = value_->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > kMaxShown) text = text.substr(0, kMaxShown) + "...";
  return printable(text);
}

Status JsonField::require_object() const {
  if (!value_->is_object()) return error("expected an object, got {}", shown());
  return Status::ok();
}

Status JsonField::allow_keys(std::initializer_list<std::string_view> known) const {
  TO_RETURN_IF_ERROR(require_object());
  for (const auto& item : value_->items()) {
    bool found = false;
    for (std::string_view key : known) found = found || item.key() == key;
    if (found) continue;
    std::string list;
    for (std::string_view key : known) list += (list.empty() ? "" : ", ") + std::string(key);
    return error("unknown key {} (known keys: {})", quote(item.key()), list);
  }
  return Status::ok();
}

Result<JsonField> JsonField::member(std::string_view key) const {
  TO_ASSIGN_OR_RETURN(std::optional<JsonField> found, optional_member(key));
  if (!found) return error("missing field {}", quote(key));
  return *std::move(found);
}

Result<std::optional<JsonField>> JsonField::optional_member(std::string_view key) const {
  TO_RETURN_IF_ERROR(require_object());
  const auto it = value_->find(key);
  if (it == value_->end()) return std::optional<JsonField>();
  return std::optional<JsonField>(child(*it, key));
}

Result<size_t> JsonField::array_size(size_t max_size) const {
  if (!value_->is_array()) return error("expected an array, got {}", shown());
  if (value_->size() > max_size) return error("has {} elements, more than the limit {}", value_->size(), max_size);
  return value_->size();
}

JsonField JsonField::element(size_t index) const { return child((*value_)[index], std::to_string(index)); }

Result<std::string> JsonField::as_string() const {
  if (!value_->is_string()) return error("expected a string, got {}", shown());
  return value_->get<std::string>();
}

Result<std::string> JsonField::as_name() const {
  TO_ASSIGN_OR_RETURN(std::string name, as_string());
  if (name.empty()) return error("expected a name, got an empty string");
  // The strict reader refuses NUL bytes; a document built in code is checked here too.
  if (has_nul(name)) return error("the name {} holds a NUL byte", quote(name));
  return name;
}

Result<int64_t> JsonField::as_int(int64_t min, int64_t max) const {
  int64_t value = 0;
  if (value_->is_number_unsigned()) {
    const auto number = value_->get<uint64_t>();
    if (number > static_cast<uint64_t>(max)) return error("expected {}, got {}", int_range(min, max), number);
    value = static_cast<int64_t>(number);
  } else if (value_->is_number_integer()) {
    value = value_->get<int64_t>();
  } else if (value_->is_number_float() && std::abs(value_->get<double>()) >= 9.2e18) {
    return error("expected {}, got {}, beyond the 64-bit integer range", int_range(min, max), shown());
  } else {
    return error("expected {}, got {}", int_range(min, max), shown());
  }
  if (value < min || value > max) return error("expected {}, got {}", int_range(min, max), value);
  return value;
}

Result<uint64_t> JsonField::as_uint(uint64_t max) const {
  const std::string range = max == std::numeric_limits<uint64_t>::max() ? std::string("an integer >= 0")
                                                                         : fmt::format("an integer in [0, {}]", max);
  if (value_->is_number_unsigned()) {
    const auto number = value_->get<uint64_t>();
    if (number > max) return error("expected {}, got {}", range, number);
    return number;
  }
  if (value_->is_number_float() && std::abs(value_->get<double>()) >= 1.8e19)
    return error("expected {}, got {}, beyond the 64-bit integer range", range, shown());
  return error("expected {}, got {}", range, shown());
}

Result<double> JsonField::as_number(double min, double max) const {
  const std::string range = range_text<double>("a number", min, max, -std::numeric_limits<double>::max(),
                                               std::numeric_limits<double>::max());
  if (!value_->is_number()) return error("expected {}, got {}", range, shown());
  const double value = value_->get<double>();
  if (!std::isfinite(value) || value < min || value > max) return error("expected {}, got {}", range, shown());
  return value;
}

Result<bool> JsonField::as_bool() const {
  if (!value_->is_boolean()) return error("expected true or false, got {}", shown());
  return value_->get<bool>();
}

Result<Dims> JsonField::as_dims() const {
  if (!value_->is_array()) return error("expected an array of dimensions, got {}", shown());
  if (value_->size() > Dims::kMaxRank)
    return error("has rank {}, more than the maximum {}", value_->size(), Dims::kMaxRank);
  std::vector<int64_t> dims;
  for (size_t i = 0; i < value_->size(); ++i) {
    TO_ASSIGN_OR_RETURN(const int64_t dim, element(i).as_int(-1));
    dims.push_back(dim);
  }
  return Dims(std::move(dims));
}

Result<std::string> JsonField::get_string(std::string_view key) const {
  TO_ASSIGN_OR_RETURN(const JsonField field, member(key));
  return field.as_string();
}

Result<std::string> JsonField::get_name(std::string_view key) const {
  TO_ASSIGN_OR_RETURN(const JsonField field, member(key));
  return field.as_name();
}

Result<int64_t> JsonField::get_int(std::string_view key, int64_t min, int64_t max) const {
  TO_ASSIGN_OR_RETURN(const JsonField field, member(key));
  return field.as_int(min, max);
}

Result<uint64_t> JsonField::get_uint(std::string_view key, uint64_t max) const {
  TO_ASSIGN_OR_RETURN(const JsonField field, member(key));
  return field.as_uint(max);
}

Result<double> JsonField::get_number(std::string_view key) const {
  TO_ASSIGN_OR_RETURN(const JsonField field, member(key));
  return field.as_number();
}

Result<bool> JsonField::get_bool(std::string_view key) const {
  TO_ASSIGN_OR_RETURN(const JsonField field, member(key));
  return field.as_bool();
}

Result<Dims> JsonField::get_dims(std::string_view key) const {
  TO_ASSIGN_OR_RETURN(const JsonField field, member(key));
  return field.as_dims();
}

}  // namespace tensoracle
