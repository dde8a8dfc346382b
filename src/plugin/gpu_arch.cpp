#include <cctype>
#include <string>

#include "core/errors.h"
#include "tensoracle/plugin.h"

namespace tensoracle {

std::string GpuArch::name() const {
  std::string out = "sm_" + std::to_string(sm);
  if (variant != '\0') out += variant;
  return out;
}

Result<GpuArch> parse_gpu_arch(std::string_view name) {
  const auto bad = [&] {
    return invalid_argument("invalid GPU architecture '{}': expected sm_<compute capability>[a|f], e.g. sm_90",
                            name);
  };
  if (name.size() < 4 || std::tolower(static_cast<unsigned char>(name[0])) != 's' ||
      std::tolower(static_cast<unsigned char>(name[1])) != 'm' || name[2] != '_') {
    return bad();
  }
  std::string_view rest = name.substr(3);
  GpuArch arch;
  if (!rest.empty() && (rest.back() == 'a' || rest.back() == 'f')) {
    arch.variant = rest.back();
    rest.remove_suffix(1);
  }
  // Two or three digits: sm_75 ... sm_121. No leading zero.
  if (rest.size() < 2 || rest.size() > 3 || rest[0] == '0') return bad();
  for (char c : rest) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return bad();
    arch.sm = arch.sm * 10 + (c - '0');
  }
  return arch;
}

}  // namespace tensoracle
