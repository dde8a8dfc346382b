// The rule every path inside a bundle or wheel must follow, so that nothing can be read from or
// written to outside it: relative, '/'-separated, no '..' component, no drive letter, no
// backslash, no empty component, no NUL.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tensoracle::bundle {

// nullopt when `path` is safe; otherwise why it is not ("absolute path", "'..' component", ...).
// `allow_trailing_slash` admits zip directory entries ("pkg/bundle/").
std::optional<std::string> unsafe_path_reason(std::string_view path, bool allow_trailing_slash = false);

}  // namespace tensoracle::bundle
