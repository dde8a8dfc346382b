// What the lints that read the source tree share (backends/backend_names_lint_test.cpp,
// core/throwing_accessors_lint_test.cpp): the source files under some top-level folders, their
// text, and that text with comments blanked so a lint matches code only.
//
//   for (const fs::path& path : source_files({"src", "include"}, false))
//     for (const std::string& line : code_lines(read_text(path), false)) ...
#pragma once

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

namespace tensoracle::source_scan {

namespace fs = std::filesystem;

inline const fs::path& source_root() {
  static const fs::path root = TENSORACLE_SOURCE_DIR;
  return root;
}

inline std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// `text` with comments blanked (string and character literals kept), line breaks kept.
inline std::string without_comments(const std::string& text, bool python) {
  std::string out;
  out.reserve(text.size());
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) out += text[++i];
      else if (c == quote || c == '\n') quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
      out += c;
    } else if ((python && c == '#') || (!python && c == '/' && i + 1 < text.size() && text[i + 1] == '/')) {
      while (i < text.size() && text[i] != '\n') ++i;
      if (i < text.size()) out += '\n';
    } else if (!python && c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      for (i += 2; i + 1 < text.size() && !(text[i] == '*' && text[i + 1] == '/'); ++i)
        if (text[i] == '\n') out += '\n';
      ++i;
    } else {
      out += c;
    }
  }
  return out;
}

// The lines of `text` with comments blanked; line i is source line i + 1.
inline std::vector<std::string> code_lines(const std::string& text, bool python) {
  std::vector<std::string> lines;
  std::istringstream in(without_comments(text, python));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline bool is_python_source(const fs::path& path) { return path.extension() == ".py"; }

// Every C++ and CUDA source (.h, .cpp, .cu, .cuh), and Python ones when `python`, under the
// given folders of the source tree (those that exist), in directory order.
inline std::vector<fs::path> source_files(std::initializer_list<const char*> tops, bool python) {
  std::vector<fs::path> files;
  for (const char* top : tops) {
    if (!fs::exists(source_root() / top)) continue;
    for (const fs::directory_entry& entry : fs::recursive_directory_iterator(source_root() / top)) {
      const std::string ext = entry.path().extension().string();
      const bool wanted = ext == ".h" || ext == ".cpp" || ext == ".cu" || ext == ".cuh" || (python && ext == ".py");
      if (entry.is_regular_file() && wanted) files.push_back(entry.path());
    }
  }
  return files;
}

// A line a lint objects to.
struct Finding {
  std::string where;  // path:line, the path relative to the source tree
  std::string line;
};

}  // namespace tensoracle::source_scan
