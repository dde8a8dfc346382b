#include "workflow/toml_reader.h"

#include <fmt/format.h>

#include <sstream>

#include "core/errors.h"

namespace tensoracle::workflow {

Result<toml::table> parse_toml(const std::string& text, const std::string& file) {
  // toml++ reports syntax errors by exception; none leaves this function.
  try {
    return toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    return invalid_argument("{}:{}:{}: {}", file, e.source().begin.line, e.source().begin.column, e.description());
  }
}

std::string where(const std::string& file, const toml::node& node) {
  const toml::source_position begin = node.source().begin;
  if (!begin) return file;
  return fmt::format("{}:{}:{}", file, begin.line, begin.column);
}

std::string toml_type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table: return "table";
    case toml::node_type::array: return "array";
    case toml::node_type::string: return "string";
    case toml::node_type::integer: return "integer";
    case toml::node_type::floating_point: return "float";
    case toml::node_type::boolean: return "boolean";
    case toml::node_type::date: return "date";
    case toml::node_type::time: return "time";
    case toml::node_type::date_time: return "date-time";
    default: return "nothing";
  }
}

TableReader::TableReader(const toml::table& table, std::string file, std::string path)
    : table_(table), file_(std::move(file)), path_(std::move(path)) {}

std::string TableReader::key_path(const std::string& key) const {
  if (path_.empty()) return key;
  return key.empty() ? path_ : path_ + "." + key;
}

Status TableReader::error(const std::string& key, const std::string& message) const {
  const toml::node* n = key.empty() ? nullptr : table_.get(key);
  const std::string at = n ? where(file_, *n) : where(file_, table_);
  const std::string name = key_path(key);
  return invalid_argument("{}: {}{}", at, name.empty() ? "" : name + ": ", message);
}

const toml::node* TableReader::node(const std::string& key) {
  known_.insert(key);
  return table_.get(key);
}

namespace {

Status wrong_type(const TableReader& r, const std::string& key, const toml::node& n, const char* want) {
  return r.error(key, fmt::format("expected {}, found {}", want, toml_type_name(n)));
}

}  // namespace

Result<std::optional<std::string>> TableReader::string(const std::string& key) {
  const toml::node* n = node(key);
  if (!n) return std::optional<std::string>();
  if (!n->is_string()) return wrong_type(*this, key, *n, "a string");
  std::string value(*n->value<std::string_view>());
  if (value.find('\0') != std::string::npos) return error(key, "the string holds a NUL character");
  return std::optional<std::string>(std::move(value));
}

Result<std::string> TableReader::required_string(const std::string& key) {
  TO_ASSIGN_OR_RETURN(std::optional<std::string> value, string(key));
  if (!value) return error("", fmt::format("the key '{}' is required", key));
  if (value->empty()) return error(key, "must not be empty");
  return *value;
}

Result<std::optional<double>> TableReader::number(const std::string& key) {
  const toml::node* n = node(key);
  if (!n) return std::optional<double>();
  if (n->is_integer()) return std::optional<double>(static_cast<double>(*n->value<int64_t>()));
  if (!n->is_floating_point()) return wrong_type(*this, key, *n, "a number");
  return std::optional<double>(*n->value<double>());
}

Result<std::optional<int64_t>> TableReader::integer(const std::string& key) {
  const toml::node* n = node(key);
  if (!n) return std::optional<int64_t>();
  if (!n->is_integer()) return wrong_type(*this, key, *n, "an integer");
  return std::optional<int64_t>(*n->value<int64_t>());
}

Result<std::optional<bool>> TableReader::boolean(const std::string& key) {
  const toml::node* n = node(key);
  if (!n) return std::optional<bool>();
  if (!n->is_boolean()) return wrong_type(*this, key, *n, "true or false");
  return std::optional<bool>(*n->value<bool>());
}

Result<const toml::table*> TableReader::table(const std::string& key) {
  const toml::node* n = node(key);
  if (!n) return static_cast<const toml::table*>(nullptr);
  if (!n->is_table()) return wrong_type(*this, key, *n, "a table");
  return n->as_table();
}

Result<const toml::array*> TableReader::array(const std::string& key) {
  const toml::node* n = node(key);
  if (!n) return static_cast<const toml::array*>(nullptr);
  if (!n->is_array()) return wrong_type(*this, key, *n, "an array");
  return n->as_array();
}

Result<std::optional<std::vector<std::string>>> TableReader::strings(const std::string& key) {
  TO_ASSIGN_OR_RETURN(const toml::array* a, array(key));
  if (!a) return std::optional<std::vector<std::string>>();
  std::vector<std::string> out;
  for (size_t i = 0; i < a->size(); ++i) {
    const toml::node& item = *a->get(i);
    if (!item.is_string())
      return invalid_argument("{}: {}[{}]: expected a string, found {}", where(file_, item), key_path(key), i,
                              toml_type_name(item));
    out.emplace_back(*item.value<std::string_view>());
  }
  return std::optional<std::vector<std::string>>(std::move(out));
}

Status TableReader::finish() const {
  for (const auto& [key, value] : table_) {
    const std::string name(key.str());
    if (known_.count(name)) continue;
    std::string list;
    for (const std::string& k : known_) list += (list.empty() ? "" : ", ") + k;
    return invalid_argument("{}: {}: unknown key (known here: {})", where(file_, value), key_path(name), list);
  }
  return Status::ok();
}

}  // namespace tensoracle::workflow
