#include "io/strict_json.h"

#include <set>
#include <vector>

#include "core/errors.h"

namespace tensoracle {
namespace {

// Thrown from the parser callback to stop parsing; never leaves parse_strict_json.
struct StrictJsonViolation {
  std::string message;
};

}  // namespace

Result<nlohmann::json> parse_strict_json(std::string_view text, const std::string& source, int max_depth) {
  using nlohmann::json;
  // nlohmann's lexer takes a NUL byte for the end of input and would ignore what follows; valid
  // JSON never contains one.
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos)
    return corrupt_data("'{}': invalid JSON: a NUL byte at offset {}", source, nul);
  std::vector<std::set<std::string>> keys_by_object;  // one set per open object
  int depth = 0;
  const json::parser_callback_t check = [&](int, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (++depth > max_depth)
          throw StrictJsonViolation{fmt::format("JSON nesting is deeper than {} levels", max_depth)};
        if (event == json::parse_event_t::object_start) keys_by_object.emplace_back();
        break;
      case json::parse_event_t::object_end:
        keys_by_object.pop_back();
        --depth;
        break;
      case json::parse_event_t::array_end:
        --depth;
        break;
      case json::parse_event_t::key:
        if (!keys_by_object.back().insert(parsed.get<std::string>()).second)
          throw StrictJsonViolation{fmt::format("duplicate key '{}' in a JSON object", parsed.get<std::string>())};
        break;
      case json::parse_event_t::value:
        break;
    }
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), check, /*allow_exceptions=*/true, /*ignore_comments=*/false);
  } catch (const StrictJsonViolation& violation) {
    return corrupt_data("'{}': {}", source, violation.message);
  } catch (const json::exception& error) {
    return corrupt_data("'{}': invalid JSON: {}", source, error.what());
  } catch (const std::bad_alloc&) {
    return make_error(StatusCode::kFailedPrecondition, "'{}': out of memory parsing JSON", source);
  }
}

std::string_view json_type_name(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::object: return "object";
    case nlohmann::json::value_t::array: return "array";
    case nlohmann::json::value_t::string: return "string";
    case nlohmann::json::value_t::boolean: return "boolean";
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float: return "number";
    default: return "binary";
  }
}

}  // namespace tensoracle
