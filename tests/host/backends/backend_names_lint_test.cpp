// No code outside src/backends/ branches on a backend's name: the registry (src/backends/
// registry.h) is the one list, and everything else asks a backend object. This lint reads the
// sources and fails on a comparison with a backend-name literal (`== "cuda"`, `"cpu" !=`,
// `.compare("cuda")`) or a hard-coded list of backend names (`{"cpu", "cuda"}`), comments
// excluded. The names are every backend the registry lists, compiled into this build or not.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>
#include <vector>

#include "backends/registry.h"
#include "host/source_scan.h"

namespace tensoracle::backends {
namespace {

using source_scan::code_lines;
using source_scan::Finding;
using source_scan::read_text;
namespace fs = std::filesystem;

const fs::path& kSource = source_scan::source_root();

// Every backend name in registry.cpp's table rows (`{"name", "description", &factory}`), whether
// or not this build compiles it.
std::set<std::string> registry_names() {
  const std::string text = read_text(kSource / "src/backends/registry.cpp");
  const std::regex row(R"re(\{\s*"([A-Za-z0-9_.-]+)",\s*")re");
  std::set<std::string> names;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), row); it != std::sregex_iterator(); ++it) names.insert((*it)[1]);
  return names;
}

// The lines of `text` (comments removed) that compare with, or list, backend-name literals.
std::vector<Finding> findings_in(const std::string& text, bool python, const std::set<std::string>& names,
                                 const std::string& path) {
  std::string alternatives;
  for (const std::string& n : names) alternatives += (alternatives.empty() ? "" : "|") + n;
  const std::string literal = "[\"'](" + alternatives + ")[\"']";
  const std::regex comparison("([=!]=\\s*" + literal + ")|(" + literal + "\\s*[=!]=)|(compare\\(\\s*" + literal + ")");
  const std::regex listed(literal + "\\s*,\\s*" + literal);
  std::vector<Finding> found;
  const std::vector<std::string> lines = code_lines(text, python);
  for (size_t number = 1; number <= lines.size(); ++number) {
    const std::string& line = lines[number - 1];
    bool mentions = false;
    for (const std::string& n : names) mentions |= line.find(n) != std::string::npos;
    if (mentions && (std::regex_search(line, comparison) || std::regex_search(line, listed)))
      found.push_back({path + ":" + std::to_string(number), line});
  }
  return found;
}

TEST(BackendNamesLint, TheRegistryTableNamesEveryCompiledBackend) {
  const std::set<std::string> names = registry_names();
  for (const std::string& compiled : backend_names()) EXPECT_EQ(names.count(compiled), 1u) << compiled;
  EXPECT_EQ(names.count(std::string(kReferenceBackend)), 1u);
}

// The detector itself: what it must catch and what it must leave alone.
TEST(BackendNamesLint, FindsComparisonsAndListsButNotCommentsOrUses) {
  const std::set<std::string> names{"cpu", "cuda"};
  struct Sample {
    const char* text;
    bool python;
  };
  for (const Sample& bad : {Sample{"if (backend == \"cuda\") {", false}, Sample{"if (\"cpu\" != name) return;", false},
                            Sample{"ok = name.compare(\"cuda\") == 0;", false},
                            Sample{"check(CLI::IsMember({\"cpu\", \"cuda\"}));", false}, Sample{"if backend == 'cuda':", true}})
    EXPECT_EQ(findings_in(bad.text, bad.python, names, "x").size(), 1u) << bad.text;
  for (const Sample& fine : {Sample{"// if (backend == \"cuda\") {", false}, Sample{"build.backend = \"cuda\";", false},
                             Sample{"/* {\"cpu\", \"cuda\"} */ int x;", false}, Sample{"auto b = create_backend(\"cpu\");", false},
                             Sample{"if (backend == kReferenceBackend) {", false}, Sample{"# if backend == 'cuda':", true},
                             Sample{"s = \"a // b\"; x = \"cuda\";", false}})
    EXPECT_TRUE(findings_in(fine.text, fine.python, names, "x").empty()) << fine.text;
}

TEST(BackendNamesLint, NoCodeOutsideSrcBackendsComparesABackendName) {
  const std::set<std::string> names = registry_names();
  ASSERT_FALSE(names.empty());
  const fs::path backends = kSource / "src/backends";
  const fs::path self = kSource / "tests/host/backends/backend_names_lint_test.cpp";
  std::vector<Finding> found;
  size_t files = 0;
  for (const fs::path& path : source_scan::source_files({"src", "include", "tools", "python", "examples", "plugins", "bench", "tests"}, true)) {
    if (path == self || std::mismatch(backends.begin(), backends.end(), path.begin()).first == backends.end()) continue;
    ++files;
    for (Finding& f : findings_in(read_text(path), source_scan::is_python_source(path), names, fs::relative(path, kSource).string()))
      found.push_back(std::move(f));
  }
  EXPECT_GT(files, 100u) << "the lint read too few files under " << kSource;
  for (const Finding& f : found)
    ADD_FAILURE() << f.where << ": compares with a backend name; ask the backend object or the registry instead:\n  " << f.line;
}

}  // namespace
}  // namespace tensoracle::backends
