// Library code calls no throwing accessor (docs/architecture.md, Errors): a missing key, an empty
// optional or a failed Result is a Status naming the thing, or a TO_ASSERT where it is a broken
// invariant, never an exception escaping through the API. This lint reads src/, include/, the
// CLI's tools/ and the bundled plugins/ (comments excluded) and fails on
//   .at( / ->at(            std::map, std::vector and nlohmann::json (use find, core/lookup.h's
//                           lookup, an index checked before, or io/json_field.h for a document)
//   .value() / ->value()    std::optional, Result (TO_ASSIGN_OR_RETURN[_CONTEXT], or *r once r
//                           is checked; in the CLI value_or_fail)
//   std::stoi, stoll, stod, ...  (std::from_chars, an error naming the text)
// The allow-list names each remaining use and why it cannot throw; an entry that no longer
// matches anything fails too, so the list stays as short as the code allows.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "host/source_scan.h"

namespace tensoracle {
namespace {

namespace fs = std::filesystem;
using source_scan::Finding;

struct Allowed {
  const char* path;  // relative to the source tree
  const char* code;  // the line, without its leading and trailing blanks
  const char* why;
};

const Allowed kAllowed[] = {
    {"include/tensoracle/status.h", "lhs = std::move(tmp).value()",
     "TO_ASSIGN_OR_RETURN and TO_ASSIGN_OR_RETURN_CONTEXT read the value on the line after returning when "
     "!tmp.is_ok(): the one place a Result's value is taken by name"},
    {"src/frontends/onnx/external_data.cpp", "const std::string& text = entry.value();",
     "the generated getter of a protobuf message's string field named 'value' (StringStringEntryProto), which "
     "returns a reference and cannot throw"},
};

const std::regex& throwing_accessor() {
  static const std::regex pattern(R"re((\.|->)\s*at\s*\(|(\.|->)\s*value\s*\(\s*\)|\bstd::sto(i|l|ul|ll|ull|f|d|ld)\s*\()re");
  return pattern;
}

std::string trimmed(const std::string& line) {
  const size_t first = line.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
}

// The lines of `text` (comments removed) that call a throwing accessor.
std::vector<Finding> findings_in(const std::string& text, const std::string& path) {
  std::vector<Finding> found;
  const std::vector<std::string> lines = source_scan::code_lines(text, false);
  for (size_t number = 1; number <= lines.size(); ++number)
    if (std::regex_search(lines[number - 1], throwing_accessor()))
      found.push_back({path + ":" + std::to_string(number), trimmed(lines[number - 1])});
  return found;
}

const Allowed* allowance(const std::string& path, const std::string& code) {
  for (const Allowed& a : kAllowed)
    if (path == a.path && code == a.code) return &a;
  return nullptr;
}

// The detector itself: what it must catch and what it must leave alone.
TEST(ThrowingAccessorsLint, FindsTheAccessorsButNotCommentsOrLookalikes) {
  for (const char* bad : {"const ArrayView& v = inputs.at(name);", "auto& r = records->at(key);",
                          "void* p = bindings.at (copy.input);", "return std::move(r).value();", "x = opt.value();",
                          "x = path_->value();", "int n = std::stoi(text);", "auto big = std::stoull(step);",
                          "double d = std::stod(s);", "const json& j = doc.at(\"layers\");"})
    EXPECT_EQ(findings_in(bad, "x").size(), 1u) << bad;
  for (const char* fine : {"// inputs.at(name) would throw", "/* r.value() */ int x;", "sum.total();",
                           "auto v = doc.value(\"key\", 0);", "if (it == m.end()) return not_found(\"x\");",
                           "const uint8_t* p = b.pointer(at);", "bool done = reader.at_end();",
                           "int n = std::from_chars(a, b, v).ec == std::errc();", "T& value() & { return get(); }"})
    EXPECT_TRUE(findings_in(fine, "x").empty()) << fine;
}

TEST(ThrowingAccessorsLint, NoLibraryCodeCallsAThrowingAccessor) {
  const fs::path& root = source_scan::source_root();
  std::vector<Finding> found;
  std::vector<bool> used(std::size(kAllowed), false);
  size_t files = 0;
  for (const fs::path& path : source_scan::source_files({"src", "include", "tools", "plugins"}, false)) {
    ++files;
    const std::string relative = fs::relative(path, root).string();
    for (Finding& f : findings_in(source_scan::read_text(path), relative)) {
      if (const Allowed* a = allowance(relative, f.line)) {
        used[static_cast<size_t>(a - kAllowed)] = true;
        continue;
      }
      found.push_back(std::move(f));
    }
  }
  EXPECT_GT(files, 100u) << "the lint read too few files under " << root;
  for (const Finding& f : found)
    ADD_FAILURE() << f.where << ": calls a throwing accessor; return a Status naming the missing thing, or "
                  << "TO_ASSERT an invariant (see this test's header):\n  " << f.line;
  for (size_t i = 0; i < used.size(); ++i)
    EXPECT_TRUE(used[i]) << "allow-list entry " << kAllowed[i].path << ": '" << kAllowed[i].code
                         << "' matches nothing any more: remove it";
}

}  // namespace
}  // namespace tensoracle
