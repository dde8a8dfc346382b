// Untrusted text in messages. A name read from a file (a blob, a tensor, a JSON key, a path inside
// an archive) may hold any byte; printed raw, a NUL cuts the message wherever it passes through a
// C string (the CLI's stderr line), and escape sequences rewrite the terminal. Every message that
// shows such a name passes it through quote():
//
//   return corrupt_data("engine '{}': blob {} is not used by the plan", label, quote(name));
//   // -> engine 'e.engine': blob 'const/ab\x00cd' is not used by the plan
#pragma once

#include <string>
#include <string_view>

namespace tensoracle {

// `text` with every byte below 0x20, DEL and a backslash escaped (\x00, \x1b, \\); other
// bytes, UTF-8 included, are kept.
std::string printable(std::string_view text);

// printable(text) between single quotes, a single quote inside escaped (\').
std::string quote(std::string_view text);

// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points past
// U+10FFFF): what a JSON document can carry.
bool is_utf8(std::string_view text);

// Whether `text` holds a NUL byte (a name that C APIs and the file system would cut short).
inline bool has_nul(std::string_view text) { return text.find('\0') != std::string_view::npos; }

}  // namespace tensoracle
