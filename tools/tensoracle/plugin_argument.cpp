#include "plugin_argument.h"

#include <filesystem>
#include <system_error>

namespace tensoracle::cli {

PluginArgument parse_plugin_argument(const std::string& value) {
  std::error_code error;
  const size_t colon = value.find(':');
  if (colon == std::string::npos || std::filesystem::is_regular_file(value, error)) return {value, {}};
  PluginArgument argument{value.substr(0, colon), {}};
  argument.options.bundle_dir = value.substr(colon + 1);
  return argument;
}

}  // namespace tensoracle::cli
