// Typed reads of a node's AttributeMap. Layer methods always store every attribute their op
// reads, so a missing key only happens for hand-built maps (add_layer); inference reports it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tensoracle/layers.h"
#include "tensoracle/network.h"

namespace tensoracle::graph {

std::optional<int64_t> find_int(const AttributeMap& attrs, const std::string& key);
std::optional<double> find_float(const AttributeMap& attrs, const std::string& key);  // ints too
std::optional<bool> find_bool(const AttributeMap& attrs, const std::string& key);
const std::string* find_string(const AttributeMap& attrs, const std::string& key);
const std::vector<int64_t>* find_ints(const AttributeMap& attrs, const std::string& key);
const std::vector<double>* find_floats(const AttributeMap& attrs, const std::string& key);

// Reads with a fallback for absent keys (inference has already checked presence and types).
int64_t get_int(const AttributeMap& attrs, const std::string& key, int64_t fallback = 0);
double get_float(const AttributeMap& attrs, const std::string& key, double fallback = 0.0);
bool get_bool(const AttributeMap& attrs, const std::string& key, bool fallback = false);
std::string get_string(const AttributeMap& attrs, const std::string& key);
std::vector<int64_t> get_ints(const AttributeMap& attrs, const std::string& key);
std::vector<double> get_floats(const AttributeMap& attrs, const std::string& key);

template <typename E>
E get_enum(const AttributeMap& attrs, const std::string& key, E fallback) {
  const std::string* s = find_string(attrs, key);
  if (!s) return fallback;
  return parse_enum<E>(*s).value_or(fallback);
}
// A DataType stored by data_type_name.
DataType get_data_type(const AttributeMap& attrs, const std::string& key, DataType fallback);

}  // namespace tensoracle::graph
