// The one JSON reader for files tensoracle does not trust: engine sections, plans,
// cache manifests, bundle manifests, plugin declarations, limits files, tactic records.
//
//   TO_ASSIGN_OR_RETURN(nlohmann::json doc, read_strict_json_file(path, "limits file"));
//   const JsonField root(doc, path, StatusCode::kInvalidArgument);
//   TO_RETURN_IF_ERROR(root.allow_keys({"default", "outputs"}));
//   TO_ASSIGN_OR_RETURN(double atol, root.get_number("atol"));  // "limits.json: /atol: ..."
//
// Parsing (nlohmann's SAX parser, iterative, feeding a DOM builder with the checks nlohmann
// lacks) refuses, naming the source and the JSON pointer where it happened:
//   - nesting deeper than `max_depth` (the parser stops there: a file of a million '[' costs
//     nothing, and code walking the result recursively cannot exhaust the stack),
//   - duplicate keys in one object (nlohmann keeps the last, so two readers could disagree),
//   - numbers that overflow a double (1e999; nlohmann reports them, they never become inf),
//   - NUL bytes, raw or as \u0000, in any string or key (they become names and paths, which C
//     APIs and messages would cut short),
//   - invalid UTF-8 and anything but whitespace after the value.
// Integers beyond the 64-bit range parse as doubles; JsonField refuses them where an integer is
// expected. Reading stays linear in the input.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "io/json_field.h"
#include "tensoracle/status.h"

namespace tensoracle {

// Deep enough for every document tensoracle writes (the deepest, a cuda plan, nests 6 levels).
inline constexpr int kMaxJsonDepth = 64;
// Files read whole into memory are refused above this size (an engine's sections are bounded by
// the engine file instead).
inline constexpr uint64_t kMaxJsonFileBytes = uint64_t{256} << 20;

// Parses `text` as one JSON value. Errors are kCorruptData (or `code`) and start with `source`.
Result<nlohmann::json> parse_strict_json(std::string_view text, const std::string& source,
                                         int max_depth = kMaxJsonDepth,
                                         StatusCode code = StatusCode::kCorruptData);

// Reads and parses the regular file `path` (at most `max_bytes`; a FIFO or device is refused
// before anything is read). `what` names the file's role in errors ("limits file"); a missing
// file is kNotFound.
Result<nlohmann::json> read_strict_json_file(const std::string& path, const std::string& what,
                                             StatusCode code = StatusCode::kCorruptData,
                                             uint64_t max_bytes = kMaxJsonFileBytes);

}  // namespace tensoracle
