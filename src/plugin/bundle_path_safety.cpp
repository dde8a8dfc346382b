#include "plugin/bundle_path_safety.h"

#include <cctype>

namespace tensoracle::bundle {

std::optional<std::string> unsafe_path_reason(std::string_view path, bool allow_trailing_slash) {
  if (path.empty()) return "empty path";
  if (path.find('\0') != std::string_view::npos) return "contains a NUL character";
  if (path.front() == '/') return "absolute path";
  // Backslashes are separators on Windows: "a\..\..\x" would escape there.
  if (path.find('\\') != std::string_view::npos) return "contains a backslash";
  if (path.size() >= 2 && std::isalpha(static_cast<unsigned char>(path[0])) && path[1] == ':') {
    return "starts with a drive letter";
  }
  if (allow_trailing_slash && path.back() == '/') path.remove_suffix(1);
  size_t start = 0;
  while (start <= path.size()) {
    const size_t end = std::min(path.find('/', start), path.size());
    const std::string_view component = path.substr(start, end - start);
    if (component.empty()) return "empty path component";
    if (component == "..") return "'..' component";
    start = end + 1;
  }
  return std::nullopt;
}

}  // namespace tensoracle::bundle
