// The build declaration's own helpers (build.h, builder_settings.h).
#include <fmt/format.h>

#include <string>

#include "passes/passes.h"
#include "tensoracle/build.h"

namespace tensoracle {

std::map<std::string, std::string> BuilderSettings::to_manifest() const {
  std::map<std::string, std::string> manifest{{"workspace_limit_bytes", std::to_string(workspace_limit_bytes)},
          {"optimization_level", std::to_string(optimization_level)},
          {"timing_iterations", std::to_string(timing_iterations)},
          {"auxiliary_streams", std::to_string(auxiliary_streams)},
          {"deterministic_replay", deterministic_replay ? "on" : "off"},
          {"tf32", "off"}};
  // Listed only when on, so the keys of fp32 builds stay those of engines built before the
  // setting existed. The keep-list is the effective one: a new default changes the key.
  if (precision != DataType::kFloat32) {
    manifest["precision"] = std::string(data_type_name(precision));
    manifest["keep_fp32"] = fmt::format("{}", fmt::join(keep_fp32 ? *keep_fp32 : passes::PrecisionOptions::default_keep_fp32(), ","));
    manifest["precision_pass"] = passes::kPrecisionPassVersion;
  }
  if (fp8_fast_accumulation) manifest["fp8_fast_accumulation"] = "on";
  return manifest;
}

EngineBuild& EngineBuild::add_input(std::string input_name, std::vector<ShapeRange> ranges, std::optional<DataType> type) {
  inputs.push_back(InputDeclaration{std::move(input_name), type, std::move(ranges)});
  return *this;
}

}  // namespace tensoracle
