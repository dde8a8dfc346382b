#include "graph/attributes.h"

namespace tensoracle::graph {

namespace {
template <typename T>
const T* find_as(const AttributeMap& attrs, const std::string& key) {
  auto it = attrs.find(key);
  return it == attrs.end() ? nullptr : std::get_if<T>(&it->second);
}
}  // namespace

std::optional<int64_t> find_int(const AttributeMap& attrs, const std::string& key) {
  if (const auto* v = find_as<int64_t>(attrs, key)) return *v;
  return std::nullopt;
}
std::optional<double> find_float(const AttributeMap& attrs, const std::string& key) {
  if (const auto* v = find_as<double>(attrs, key)) return *v;
  if (const auto* v = find_as<int64_t>(attrs, key)) return static_cast<double>(*v);
  return std::nullopt;
}
std::optional<bool> find_bool(const AttributeMap& attrs, const std::string& key) {
  if (const auto* v = find_as<bool>(attrs, key)) return *v;
  return std::nullopt;
}
const std::string* find_string(const AttributeMap& attrs, const std::string& key) {
  return find_as<std::string>(attrs, key);
}
const std::vector<int64_t>* find_ints(const AttributeMap& attrs, const std::string& key) {
  return find_as<std::vector<int64_t>>(attrs, key);
}
const std::vector<double>* find_floats(const AttributeMap& attrs, const std::string& key) {
  return find_as<std::vector<double>>(attrs, key);
}

int64_t get_int(const AttributeMap& attrs, const std::string& key, int64_t fallback) {
  return find_int(attrs, key).value_or(fallback);
}
double get_float(const AttributeMap& attrs, const std::string& key, double fallback) {
  return find_float(attrs, key).value_or(fallback);
}
bool get_bool(const AttributeMap& attrs, const std::string& key, bool fallback) {
  return find_bool(attrs, key).value_or(fallback);
}
std::string get_string(const AttributeMap& attrs, const std::string& key) {
  const std::string* s = find_string(attrs, key);
  return s ? *s : std::string();
}
std::vector<int64_t> get_ints(const AttributeMap& attrs, const std::string& key) {
  const auto* v = find_ints(attrs, key);
  return v ? *v : std::vector<int64_t>();
}
std::vector<double> get_floats(const AttributeMap& attrs, const std::string& key) {
  const auto* v = find_floats(attrs, key);
  return v ? *v : std::vector<double>();
}
DataType get_data_type(const AttributeMap& attrs, const std::string& key, DataType fallback) {
  const std::string* s = find_string(attrs, key);
  if (!s) return fallback;
  auto parsed = parse_data_type(*s);
  return parsed.is_ok() ? parsed.value() : fallback;
}

}  // namespace tensoracle::graph
