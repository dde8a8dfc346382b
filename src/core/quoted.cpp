#include "core/quoted.h"

namespace tensoracle {

namespace {

std::string escaped(std::string_view text, bool escape_quote) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\\' || (escape_quote && c == '\'')) {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte == 0x7f) {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string printable(std::string_view text) { return escaped(text, false); }

std::string quote(std::string_view text) { return "'" + escaped(text, true) + "'"; }

}  // namespace tensoracle
