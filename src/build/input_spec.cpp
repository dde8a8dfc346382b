// Input specs as the CLI and model packages write them (build.h, package.h):
// "image:1x3x32x32" or "image:1x3x32x32:8x3x32x32:32x3x32x32", several joined by ';'.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "core/errors.h"
#include "tensoracle/build.h"
#include "tensoracle/package.h"

namespace tensoracle {

Result<Dims> parse_dims(const std::string& text) {
  std::vector<int64_t> dims;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t x = text.find('x', pos);
    const std::string part = text.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    if (part.empty() || part.size() > 18 || part.find_first_not_of("0123456789") != std::string::npos)
      return invalid_argument("shape '{}': '{}' is not a non-negative dimension (write dims like 1x3x32x32)", text, part);
    int64_t value = 0;
    std::from_chars(part.data(), part.data() + part.size(), value);  // at most 18 digits: cannot overflow
    dims.push_back(value);
    if (x == std::string::npos) break;
    pos = x + 1;
  }
  return Dims(std::move(dims));
}

Result<std::pair<std::string, ShapeRange>> parse_input_spec(const std::string& text) {
  std::vector<std::string> parts;
  size_t pos = 0;
  for (size_t colon; (colon = text.find(':', pos)) != std::string::npos; pos = colon + 1) parts.push_back(text.substr(pos, colon - pos));
  parts.push_back(text.substr(pos));
  if ((parts.size() != 2 && parts.size() != 4) || parts[0].empty())
    return invalid_argument("input '{}': write NAME:DIMS or NAME:MIN:OPT:MAX (dims like 1x3x32x32)", text);
  std::vector<Dims> shapes;
  for (size_t i = 1; i < parts.size(); ++i) {
    TO_ASSIGN_OR_RETURN_CONTEXT(Dims dims, parse_dims(parts[i]), fmt::format("input '{}'", text));
    shapes.push_back(std::move(dims));
  }
  ShapeRange range = shapes.size() == 1 ? ShapeRange::fixed(shapes[0]) : ShapeRange{shapes[0], shapes[1], shapes[2]};
  return std::make_pair(parts[0], range);
}

Result<std::vector<InputDeclaration>> declare_inputs(const std::vector<std::string>& specs) {
  std::vector<InputDeclaration> out;
  for (const std::string& text : specs) {
    TO_ASSIGN_OR_RETURN(auto spec, parse_input_spec(text));
    auto same = std::find_if(out.begin(), out.end(), [&](const InputDeclaration& d) { return d.name == spec.first; });
    if (same == out.end()) out.push_back(InputDeclaration{spec.first, std::nullopt, {spec.second}});
    else same->profiles.push_back(spec.second);
  }
  for (const InputDeclaration& input : out) {
    if (input.profiles.size() == out.front().profiles.size()) continue;
    std::string counts;
    for (const InputDeclaration& d : out) counts += fmt::format("{}'{}' {}", counts.empty() ? "" : ", ", d.name, d.profiles.size());
    return invalid_argument(
        "the inputs declare different numbers of optimization profiles ({}): give every input once per profile, "
        "in profile order",
        counts);
  }
  return out;
}

Result<std::vector<InputDeclaration>> parse_input_specs(const std::string& text) {
  std::vector<std::string> specs;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(';', pos);
    if (end == std::string::npos) end = text.size();
    specs.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return declare_inputs(specs);
}

}  // namespace tensoracle
