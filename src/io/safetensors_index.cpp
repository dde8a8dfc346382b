#include "io/safetensors_index.h"

#include <algorithm>
#include <new>
#include <nlohmann/json.hpp>
#include <set>

#include "core/errors.h"
#include "core/quoted.h"

namespace tensoracle {
namespace {

constexpr int kMaxDepth = 64;

// Shard names come from a file we do not trust: they must stay inside the index's directory.
std::string check_shard_name(const std::string& shard, const std::string& tensor) {
  if (shard.empty()) return fmt::format("field 'weight_map': tensor '{}' maps to an empty file name", tensor);
  if (shard.front() == '/')
    return fmt::format("field 'weight_map': tensor '{}' maps to the absolute path '{}' (shards must be relative)",
                       tensor, shard);
  for (size_t start = 0; start <= shard.size();) {
    const size_t end = std::min(shard.find('/', start), shard.size());
    if (shard.compare(start, end - start, "..") == 0)
      return fmt::format("field 'weight_map': tensor '{}' maps to '{}', which leaves the index's directory", tensor,
                         shard);
    start = end + 1;
  }
  return "";
}

// Checks the schema while parsing (a SAX handler): an index lists every tensor of a checkpoint,
// tens of thousands of entries, and a DOM would cost more than opening all the shards.
class IndexHandler {
 public:
  using json = nlohmann::json;

  explicit IndexHandler(SafetensorsIndex& index) : index_(index) {}
  const std::string& error() const { return error_; }

  bool null() { return scalar("null", "null"); }
  bool boolean(bool value) { return scalar("boolean", value ? "true" : "false"); }
  bool number_integer(json::number_integer_t value) { return scalar("number", std::to_string(value)); }
  bool number_unsigned(json::number_unsigned_t value) { return scalar("number", std::to_string(value)); }
  bool number_float(json::number_float_t, const json::string_t& text) { return scalar("number", text); }
  bool binary(json::binary_t&) { return scalar("binary", ""); }

  bool string(json::string_t& value) {
    if (has_nul(value)) return fail("the string {} holds a NUL byte (\\u0000)", quote(value));
    if (depth_ == 2 && section_ == Section::kWeightMap) {
      if (std::string problem = check_shard_name(value, key_); !problem.empty()) return fail("{}", problem);
      index_.weight_map.emplace_back(std::move(key_), std::move(value));
      return true;
    }
    return scalar("string", value);
  }

  bool start_object(std::size_t) { return open("object"); }
  bool start_array(std::size_t) { return open("array"); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(json::string_t& key) {
    if (has_nul(key)) return fail("the key {} holds a NUL byte (\\u0000)", quote(key));
    if (depth_ == 1 && !top_keys_.insert(key).second) return fail("the key '{}' appears twice", key);
    if (depth_ <= 2) key_ = std::move(key);
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& error) {
    if (error_.empty()) error_ = fmt::format("invalid JSON: {}", error.what());
    return false;
  }

  bool saw_weight_map() const { return saw_weight_map_; }

 private:
  enum class Section { kNone, kMetadata, kWeightMap, kOther };

  template <typename... Args>
  bool fail(fmt::format_string<Args...> format, Args&&... args) {
    error_ = fmt::format(format, std::forward<Args>(args)...);
    return false;
  }

  // A scalar value of JSON type `type` (text `text`) at the current place.
  bool scalar(std::string_view type, std::string text) {
    if (depth_ == 0) return fail("the index must be a JSON object, got {}", type);
    if (depth_ == 1) {
      if (key_ == "weight_map") return fail("field 'weight_map' must be an object, got {}", type);
      if (key_ == "metadata" && type != "null") return fail("field 'metadata' must be an object, got {}", type);
      return true;
    }
    if (depth_ == 2 && section_ == Section::kMetadata) {
      if (!index_.metadata.emplace(key_, std::move(text)).second)
        return fail("field 'metadata' has the key '{}' twice", key_);
      return true;
    }
    if (depth_ == 2 && section_ == Section::kWeightMap)
      return fail("field 'weight_map': tensor '{}' must map to a file name, got {}", key_, type);
    return true;  // inside an ignored top-level value
  }

  bool open(std::string_view type) {
    if (++depth_ > kMaxDepth) return fail("JSON nesting is deeper than {} levels", kMaxDepth);
    if (depth_ == 1) {
      if (type != "object") return fail("the index must be a JSON object, got {}", type);
    } else if (depth_ == 2) {
      section_ = key_ == "metadata" ? Section::kMetadata : key_ == "weight_map" ? Section::kWeightMap : Section::kOther;
      if (section_ == Section::kWeightMap) saw_weight_map_ = true;
      if (section_ != Section::kOther && type != "object")
        return fail("field '{}' must be an object, got {}", key_, type);
    } else if (depth_ == 3) {
      if (section_ == Section::kMetadata)
        return fail("field 'metadata': the value of '{}' must be a string, number, boolean or null, got {}", key_, type);
      if (section_ == Section::kWeightMap)
        return fail("field 'weight_map': tensor '{}' must map to a file name, got {}", key_, type);
    }
    return true;
  }

  bool close() {
    if (--depth_ == 1) section_ = Section::kNone;
    return true;
  }

  SafetensorsIndex& index_;
  int depth_ = 0;
  Section section_ = Section::kNone;
  std::string key_;
  std::set<std::string> top_keys_;
  bool saw_weight_map_ = false;
  std::string error_;
};

Status parse_index(std::string_view text, SafetensorsIndex& index) {
  // nlohmann's lexer takes a NUL byte for the end of input and would ignore what follows.
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos)
    return corrupt_data("invalid JSON: a NUL byte at offset {}", nul);
  IndexHandler handler(index);
  nlohmann::json::sax_parse(text.begin(), text.end(), &handler, nlohmann::json::input_format_t::json, /*strict=*/true);
  if (!handler.error().empty()) return corrupt_data("{}", handler.error());
  if (!handler.saw_weight_map()) return corrupt_data("missing field 'weight_map'");
  auto& map = index.weight_map;
  std::sort(map.begin(), map.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  const auto twice = std::adjacent_find(map.begin(), map.end(), [](const auto& a, const auto& b) { return a.first == b.first; });
  if (twice != map.end()) return corrupt_data("field 'weight_map' lists tensor '{}' twice", twice->first);
  return Status::ok();
}

}  // namespace

Result<SafetensorsIndex> parse_safetensors_index(std::string_view text, const std::string& source) {
  SafetensorsIndex index;
  Status status;
  try {
    status = parse_index(text, index);
  } catch (const std::bad_alloc&) {
    status = make_error(StatusCode::kFailedPrecondition, "out of memory parsing the index");
  }
  if (!status.is_ok()) return status.with_context(fmt::format("'{}'", source));
  return index;
}

}  // namespace tensoracle
