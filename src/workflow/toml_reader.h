// Strict reading of a pipeline file's TOML tables: every key must be known, every value of the
// expected type, and every error names the file, line, column and dotted key.
#pragma once

#include <toml++/toml.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tensoracle/status.h"

namespace tensoracle::workflow {

// Parses TOML text; a syntax error names `file`, the line and column and toml++'s description.
Result<toml::table> parse_toml(const std::string& text, const std::string& file);

// "pipeline.toml:12:5" for a node (just the file when the node has no position).
std::string where(const std::string& file, const toml::node& node);

class TableReader {
 public:
  // `path` is the table's dotted key ("stage2.candidate[1]"; empty for the root).
  TableReader(const toml::table& table, std::string file, std::string path);

  // Each getter marks the key as known. Absent keys give an empty optional (or nullptr); a key of
  // another type is an error naming it and both types.
  Result<std::optional<std::string>> string(const std::string& key);
  Result<std::string> required_string(const std::string& key);
  Result<std::optional<double>> number(const std::string& key);  // integer or float
  Result<std::optional<int64_t>> integer(const std::string& key);
  Result<std::optional<bool>> boolean(const std::string& key);
  Result<const toml::table*> table(const std::string& key);
  Result<const toml::array*> array(const std::string& key);
  // An array of strings.
  Result<std::optional<std::vector<std::string>>> strings(const std::string& key);
  // Marks a key known without reading it (read another way by the caller).
  const toml::node* node(const std::string& key);

  // An error at `key` (or at the table itself when empty): "FILE:LINE:COL: PATH.key: message".
  Status error(const std::string& key, const std::string& message) const;
  // Errors on the first key no getter asked for, listing the known ones.
  Status finish() const;

  const std::string& file() const { return file_; }
  std::string key_path(const std::string& key) const;

 private:
  const toml::table& table_;
  std::string file_;
  std::string path_;
  std::set<std::string> known_;
};

// The name of a node's type for messages ("string", "integer", "table", ...).
std::string toml_type_name(const toml::node& node);

}  // namespace tensoracle::workflow
