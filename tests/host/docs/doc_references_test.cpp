// The docs name real files. README.md and docs/*.md (not docs/perf/, a dated log) are read for
// repository paths (`src/...`, `include/...`, `docs/...`, `scripts/...`, ...) and relative
// Markdown links; each must exist in the tree. Comments and docstrings in the code are read for
// the docs they cite (`docs/<name>.md`). Nothing may cite a planning document that the
// repository does not hold (the project's specification or design notes by file name or by
// section number): a reader of the repository cannot open them, so the text must say what it
// means in words.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace tensoracle {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = TENSORACLE_SOURCE_DIR;

// The top-level folders a doc may name a path under.
const char* const kTopFolders = "src|include|tools|tests|scripts|python|bench|examples|plugins|docs|cmake|\\.ci";

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Finding {
  size_t line = 0;
  std::string reference;
};

size_t line_of(const std::string& text, size_t offset) {
  return 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

// A placeholder (`ops/<op>.cpp`, `cu*/bin`, `{a,b}`, `...`, `$OUT`) names no single file.
bool is_pattern(const std::string& path) { return path.find_first_of("<>*{}$") != std::string::npos || path.find("...") != std::string::npos; }

// The repository paths named in `text` (a doc) that do not exist under `root`.
std::vector<Finding> missing_paths(const std::string& text, const fs::path& root) {
  const std::regex path(std::string("(^|[^A-Za-z0-9_./-])((") + kTopFolders + ")/[A-Za-z0-9_./<>*{}$-]*)");
  std::vector<Finding> found;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), path); it != std::sregex_iterator(); ++it) {
    std::string p = (*it)[2];
    while (!p.empty() && (p.back() == '.' || p.back() == ',' || p.back() == ':' || p.back() == ';')) p.pop_back();
    if (is_pattern(p) || fs::exists(root / p)) continue;
    found.push_back({line_of(text, static_cast<size_t>((*it).position(2))), p});
  }
  return found;
}

// `text` with fenced code blocks and inline code spans blanked (line breaks kept): `](x)` in code
// is C++ or shell, not a link.
std::string without_code(const std::string& text) {
  std::string out = text;
  bool fenced = false;
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    const bool fence = out.compare(start, 3, "```") == 0;
    if (fenced || fence) std::fill(out.begin() + static_cast<std::ptrdiff_t>(start), out.begin() + static_cast<std::ptrdiff_t>(end), ' ');
    if (fence) fenced = !fenced;
    start = end + 1;
  }
  bool in_span = false;
  for (char& c : out) {
    if (c == '`') in_span = !in_span;
    if (c == '\n') in_span = false;
    if (in_span || c == '`') c = ' ';
  }
  return out;
}

// The relative Markdown links in `text` (a doc in `folder`) whose target does not exist.
std::vector<Finding> missing_links(const std::string& text, const fs::path& folder) {
  const std::string prose = without_code(text);
  const std::regex link(R"re(\]\(([^)\s]+)\))re");
  std::vector<Finding> found;
  for (auto it = std::sregex_iterator(prose.begin(), prose.end(), link); it != std::sregex_iterator(); ++it) {
    std::string target = (*it)[1];
    if (target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0) continue;
    target = target.substr(0, target.find('#'));
    if (target.empty() || fs::exists(folder / target)) continue;
    found.push_back({line_of(prose, static_cast<size_t>((*it).position(1))), (*it)[1]});
  }
  return found;
}

// The docs (`docs/<name>.md`) that `text` (code, comments included) cites and `root` lacks.
std::vector<Finding> missing_cited_docs(const std::string& text, const fs::path& root) {
  const std::regex doc(R"re((^|[^A-Za-z0-9_./-])(docs/[A-Za-z0-9_-]+\.md))re");
  std::vector<Finding> found;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), doc); it != std::sregex_iterator(); ++it)
    if (!fs::exists(root / (*it)[2].str())) found.push_back({line_of(text, static_cast<size_t>((*it).position(2))), (*it)[2]});
  return found;
}

// Citations of planning documents outside the repository: their file names (the specification,
// the design notes, the seed notes), or a section number of the specification ("SPEC F15").
std::vector<Finding> outside_documents(const std::string& text) {
  const std::regex cited(R"re(\b(SPEC\.md|DESIGN\.md|SPEC F[0-9]+|seed/[A-Za-z0-9_-]+\.txt))re");
  std::vector<Finding> found;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), cited); it != std::sregex_iterator(); ++it)
    found.push_back({line_of(text, static_cast<size_t>((*it).position(1))), (*it)[1]});
  return found;
}

std::vector<fs::path> docs() {
  std::vector<fs::path> paths{kSource / "README.md"};
  for (const fs::directory_entry& entry : fs::directory_iterator(kSource / "docs"))
    if (entry.is_regular_file() && entry.path().extension() == ".md") paths.push_back(entry.path());
  return paths;
}

// Every source, script and build file of the tree (not fixtures, not the perf log).
std::vector<fs::path> code_files() {
  std::vector<fs::path> paths;
  for (const char* top : {"src", "include", "tools", "python", "tests", "scripts", "bench", "examples", "cmake"}) {
    if (!fs::exists(kSource / top)) continue;
    for (const fs::directory_entry& entry : fs::recursive_directory_iterator(kSource / top)) {
      const fs::path& p = entry.path();
      const std::string ext = p.extension().string();
      if (!entry.is_regular_file() || p.string().find("/fixtures/") != std::string::npos) continue;
      if (ext == ".h" || ext == ".cpp" || ext == ".cu" || ext == ".cuh" || ext == ".py" || ext == ".pyi" || ext == ".cmake" ||
          ext == ".toml" || ext == ".in" || p.filename() == "CMakeLists.txt" || p.parent_path().filename() == "scripts")
        paths.push_back(p);
    }
  }
  for (const char* top : {"CMakeLists.txt", "CMakePresets.json", "pyproject.toml", ".ci/run"})
    if (fs::exists(kSource / top)) paths.push_back(kSource / top);
  return paths;
}

std::string where(const fs::path& file, const Finding& f) {
  return fs::relative(file, kSource).string() + ":" + std::to_string(f.line) + ": " + f.reference;
}

// The detectors themselves, on a sample tree: what they must catch and what they must leave alone.
TEST(DocReferences, TheDetectorsCatchBadPathsAndLinks) {
  const fs::path root = fs::temp_directory_path() / ("tensoracle_doc_references_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  fs::remove_all(root);
  fs::create_directories(root / "docs");
  fs::create_directories(root / "src/io");
  std::ofstream(root / "src/io/npy.cpp") << "";
  std::ofstream(root / "docs/cache.md") << "";

  const std::string doc =
      "Reads src/io/npy.cpp, `src/io/npz.cpp` and src/graph/ops/<op>.cpp.\n"
      "See [the cache](cache.md), [a section](cache.md#keys), [the web](https://example.org) and [gone](engines.md).\n"
      "```cpp\nauto f = [](Network& n) { return n; };\n```\n";
  const std::vector<Finding> paths = missing_paths(doc, root);
  ASSERT_EQ(paths.size(), 1u);
  EXPECT_EQ(paths[0].reference, "src/io/npz.cpp");
  EXPECT_EQ(paths[0].line, 1u);
  const std::vector<Finding> links = missing_links(doc, root / "docs");
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links[0].reference, "engines.md");
  EXPECT_EQ(links[0].line, 2u);

  const std::vector<Finding> cited = missing_cited_docs("// docs/cache.md, docs/" "passes.md\n", root);
  ASSERT_EQ(cited.size(), 1u);
  EXPECT_EQ(cited[0].reference, "docs/" "passes.md");
  const std::string outside =
      std::string("// (") + "SPEC F15) and " + "DESIGN" + ".md, the " + "seed/" + "notes.txt; --input SPEC is a flag.\n";
  EXPECT_EQ(outside_documents(outside).size(), 3u);
  fs::remove_all(root);
}

TEST(DocReferences, EveryPathAndLinkInTheDocsExists) {
  const std::vector<fs::path> files = docs();
  EXPECT_GT(files.size(), 10u) << "read too few docs under " << kSource;
  for (const fs::path& file : files) {
    const std::string text = read(file);
    for (const Finding& f : missing_paths(text, kSource)) ADD_FAILURE() << where(file, f) << " does not exist";
    for (const Finding& f : missing_links(text, file.parent_path())) ADD_FAILURE() << where(file, f) << ": the link's target does not exist";
  }
}

TEST(DocReferences, EveryDocTheCodeCitesExists) {
  const std::vector<fs::path> files = code_files();
  EXPECT_GT(files.size(), 100u) << "read too few files under " << kSource;
  for (const fs::path& file : files)
    for (const Finding& f : missing_cited_docs(read(file), kSource)) ADD_FAILURE() << where(file, f) << " does not exist";
}

TEST(DocReferences, NothingCitesADocumentOutsideTheRepository) {
  const fs::path self = kSource / "tests/host/docs/doc_references_test.cpp";
  std::vector<fs::path> files = code_files();
  for (const fs::path& doc : docs()) files.push_back(doc);
  for (const fs::path& file : files) {
    if (file == self) continue;
    for (const Finding& f : outside_documents(read(file)))
      ADD_FAILURE() << where(file, f) << ": not in the repository; say in words what it requires";
  }
}

}  // namespace
}  // namespace tensoracle
