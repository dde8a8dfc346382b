#include "io/strict_json.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "core/errors.h"
#include "core/quoted.h"
#include "io/mapped_file.h"

namespace tensoracle {
namespace {

using nlohmann::json;

// Builds the document from nlohmann's SAX events (the parser itself is iterative), refusing what
// parse_strict_json's header lists. Returning false stops the parser at once.
class StrictDomBuilder {
 public:
  StrictDomBuilder(json& root, int max_depth) : root_(root), max_depth_(max_depth) {}

  bool null() { return add(json(nullptr)); }
  bool boolean(bool value) { return add(json(value)); }
  bool number_integer(json::number_integer_t value) { return add(json(value)); }
  bool number_unsigned(json::number_unsigned_t value) { return add(json(value)); }
  bool number_float(json::number_float_t value, const json::string_t&) { return add(json(value)); }
  bool string(json::string_t& value) {
    if (has_nul(value)) return fail("the string {} holds a NUL byte (\\u0000)", quote(value));
    return add(json(std::move(value)));
  }
  bool binary(json::binary_t&) { return fail("binary values are not JSON"); }

  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(json::string_t& key) {
    Frame& frame = stack_.back();
    frame.key = key;  // before the checks, so the error's pointer names this key
    if (has_nul(key)) return fail("the key {} holds a NUL byte (\\u0000)", quote(key));
    auto [it, inserted] = frame.value->get_ref<json::object_t&>().emplace(key, nullptr);
    if (!inserted) return fail("duplicate key {}", quote(key));
    slot_ = &it->second;
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& error) {
    // nlohmann's message ("[json.exception.parse_error.101] parse error at line 1, column 7:
    // syntax error ...", "number overflow parsing '1e999'") without its bracketed id.
    std::string what = error.what();
    if (const size_t bracket = what.find("] "); what.rfind("[json.exception.", 0) == 0 && bracket != std::string::npos)
      what = what.substr(bracket + 2);
    return fail("invalid JSON: {}", what);
  }

  const std::string& error() const { return error_; }
  // Where the error happened, as a JSON pointer ("" at the top).
  std::string pointer() const {
    std::string out;
    for (const Frame& frame : stack_) {
      if (frame.value->is_array())
        out += "/" + std::to_string(frame.next);
      else if (frame.key)
        out += "/" + json_pointer_token(*frame.key);
    }
    return out;
  }

 private:
  struct Frame {
    json* value;
    std::optional<std::string> key;  // objects: the key being read
    size_t next = 0;                 // arrays: the index of the element being read
  };

  template <typename... Args>
  bool fail(fmt::format_string<Args...> format, Args&&... args) {
    if (error_.empty()) error_ = fmt::format(format, std::forward<Args>(args)...);
    return false;
  }

  json* place(json&& value) {
    if (stack_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    json& parent = *stack_.back().value;
    if (parent.is_array()) {
      auto& array = parent.get_ref<json::array_t&>();
      array.push_back(std::move(value));
      return &array.back();
    }
    *slot_ = std::move(value);
    return slot_;
  }

  // A complete value at the current position: an array moves on to its next element.
  void advance() {
    if (!stack_.empty() && stack_.back().value->is_array()) ++stack_.back().next;
  }

  bool add(json&& value) {
    place(std::move(value));
    advance();
    return true;
  }

  bool open(json&& container) {
    if (static_cast<int>(stack_.size()) >= max_depth_) return fail("nesting is deeper than {} levels", max_depth_);
    json* placed = place(std::move(container));
    stack_.push_back(Frame{placed, std::nullopt, 0});
    return true;
  }

  bool close() {
    stack_.pop_back();
    advance();
    return true;
  }

  json& root_;
  const int max_depth_;
  std::vector<Frame> stack_;
  json* slot_ = nullptr;  // the member the next value of the innermost object goes to
  std::string error_;
};

}  // namespace

Result<json> parse_strict_json(std::string_view text, const std::string& source, int max_depth, StatusCode code) {
  // Stated plainly instead of as a lexer error: valid JSON never holds a raw NUL byte.
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos)
    return Status(code, fmt::format("{}: invalid JSON: a NUL byte at byte {}", source, nul));
  json root;
  StrictDomBuilder builder(root, max_depth);
  try {
    json::sax_parse(text.begin(), text.end(), &builder, json::input_format_t::json, /*strict=*/true,
                    /*ignore_comments=*/false);
  } catch (const std::bad_alloc&) {
    return make_error(StatusCode::kFailedPrecondition, "{}: out of memory parsing {} bytes of JSON", source, text.size());
  }
  if (!builder.error().empty()) {
    const std::string pointer = builder.pointer();
    return Status(code, fmt::format("{}: {}{}", source, pointer.empty() ? "" : printable(pointer) + ": ", builder.error()));
  }
  return root;
}

Result<json> read_strict_json_file(const std::string& path, const std::string& what, StatusCode code,
                                   uint64_t max_bytes) {
  auto file = MappedFile::open(path);
  if (!file.is_ok()) {
    if (file.status().code() == StatusCode::kNotFound) return not_found("{} {} does not exist", what, quote(path));
    return file.status().with_context(what);
  }
  if ((*file)->size() > max_bytes)
    return Status(code, fmt::format("{} {} has {} bytes, more than the {} a JSON file may have", what, quote(path),
                                    (*file)->size(), max_bytes));
  const std::string_view text(reinterpret_cast<const char*>((*file)->data()), (*file)->size());
  return parse_strict_json(text, path, kMaxJsonDepth, code);
}

}  // namespace tensoracle
