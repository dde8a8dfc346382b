// A count with its noun in the right number, for messages: "1 engine", "3 engines",
// "1 entry", "2 entries" (counted(2, "entry", "entries")).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tensoracle {

inline std::string counted(uint64_t count, std::string_view noun, std::string_view plural = {}) {
  std::string text = std::to_string(count) + " ";
  if (count == 1) return text.append(noun);
  return plural.empty() ? text.append(noun).append("s") : text.append(plural);
}

}  // namespace tensoracle
