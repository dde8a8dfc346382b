// parse_byte_size and format_byte_size.
#include "tensoracle/byte_size.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>

namespace tensoracle {

Result<uint64_t> parse_byte_size(std::string_view text) {
  const auto not_a_size = [&] {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("'{}' is not a size (examples: 4096, 512M, 10G, 1.5GiB)", text));
  };
  size_t end = 0;
  while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) ++end;
  if (end == 0) return not_a_size();
  double number = 0;
  const auto parsed = std::from_chars(text.data(), text.data() + end, number);
  if (parsed.ec != std::errc() || parsed.ptr != text.data() + end) return not_a_size();
  std::string unit(text.substr(end));
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() > 1 && unit.back() == 'B') unit.pop_back();  // "GB", "GIB"
  if (unit.size() > 1 && unit.back() == 'I') unit.pop_back();
  double scale = 1;
  if (unit == "K") scale = 1024.0;
  else if (unit == "M") scale = 1024.0 * 1024;
  else if (unit == "G") scale = 1024.0 * 1024 * 1024;
  else if (unit == "T") scale = 1024.0 * 1024 * 1024 * 1024;
  else if (!unit.empty() && unit != "B")
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("'{}' has an unknown unit '{}' (use K, M, G or T)", text, text.substr(end)));
  const double bytes = number * scale;
  if (!std::isfinite(bytes) || bytes >= 1.8e19)
    return Status(StatusCode::kInvalidArgument, fmt::format("size '{}' is too large", text));
  return static_cast<uint64_t>(bytes);
}

std::string format_byte_size(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 6) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", value, units[unit]);
}

}  // namespace tensoracle
