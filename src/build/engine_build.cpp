// The build declaration's own helpers (build.h, builder_settings.h).
#include <string>

#include "tensoracle/build.h"

namespace tensoracle {

std::map<std::string, std::string> BuilderSettings::to_manifest() const {
  return {{"workspace_limit_bytes", std::to_string(workspace_limit_bytes)},
          {"optimization_level", std::to_string(optimization_level)},
          {"timing_iterations", std::to_string(timing_iterations)},
          {"auxiliary_streams", std::to_string(auxiliary_streams)},
          {"deterministic_replay", deterministic_replay ? "on" : "off"},
          {"tf32", "off"}};
}

EngineBuild& EngineBuild::add_input(std::string input_name, std::vector<ShapeRange> ranges, std::optional<DataType> type) {
  inputs.push_back(InputDeclaration{std::move(input_name), type, std::move(ranges)});
  return *this;
}

}  // namespace tensoracle
