// open_engine: an EngineBuild through the cache store, with the I/O check (engine.h).
#include <fmt/format.h>

#include "core/errors.h"
#include "tensoracle/engine.h"

namespace tensoracle {

namespace {

std::string ranges_text(const std::vector<ShapeRange>& ranges) {
  std::string out;
  for (const ShapeRange& r : ranges)
    out += (out.empty() ? "" : ", ") + fmt::format("{}..{} (opt {})", r.min.to_string(), r.max.to_string(), r.opt.to_string());
  return "[" + out + "]";
}

}  // namespace

std::vector<std::string> io_mismatches(const IoTable& engine, const IoTable& declared) {
  std::vector<std::string> out;
  auto find = [](const IoTable& table, const IoTensor& like) -> const IoTensor* {
    for (const IoTensor& t : table.tensors)
      if (t.name == like.name) return &t;
    return nullptr;
  };
  for (size_t i = 0; i < declared.tensors.size(); ++i) {
    const IoTensor& want = declared.tensors[i];
    const char* role = want.is_input ? "input" : "output";
    const IoTensor* have = find(engine, want);
    if (have == nullptr) {
      out.push_back(fmt::format("{} '{}': declared, but the engine has no such tensor", role, want.name));
      continue;
    }
    if (have->is_input != want.is_input)
      out.push_back(fmt::format("'{}': declared as an {}, the engine has it as an {}", want.name, role,
                                have->is_input ? "input" : "output"));
    if (i >= engine.tensors.size() || engine.tensors[i].name != want.name)
      out.push_back(fmt::format("{} '{}': declared at position {}, the engine binds it elsewhere", role, want.name, i));
    if (have->dtype != want.dtype)
      out.push_back(fmt::format("{} '{}': type {} in the engine, declared {}", role, want.name, data_type_name(have->dtype),
                                data_type_name(want.dtype)));
    if (have->format != want.format)
      out.push_back(fmt::format("{} '{}': format {} in the engine, declared {}", role, want.name,
                                tensor_format_name(have->format), tensor_format_name(want.format)));
    if (!(have->profiles == want.profiles))
      out.push_back(fmt::format("{} '{}': shape ranges {} in the engine, declared {}", role, want.name, ranges_text(have->profiles),
                                ranges_text(want.profiles)));
  }
  for (const IoTensor& t : engine.tensors)
    if (find(declared, t) == nullptr)
      out.push_back(fmt::format("{} '{}': in the engine, not declared", t.is_input ? "input" : "output", t.name));
  return out;
}

Result<OpenedEngine> open_engine(const EngineBuild& build, CachePolicy policy, const CacheOptions& cache_options) {
  CacheStore store(cache_options);
  TO_RETURN_IF_ERROR(store.settings_status());
  FileHashCache sidecar = store.file_hashes();
  TO_ASSIGN_OR_RETURN(PreparedBuild prepared, prepare_build(build, &sidecar));
  EngineBuildFn build_fn = [&]() { return plan_engine(build, prepared); };
  TO_ASSIGN_OR_RETURN(CacheOpenResult opened, store.open_or_build(prepared.manifest, policy, build_fn));

  std::vector<std::string> mismatches = io_mismatches(opened.engine.io_table(), prepared.io_table);
  if (!mismatches.empty()) {
    std::string text;
    for (const std::string& m : mismatches) text += (text.empty() ? "" : "; ") + m;
    return invalid_argument("engine '{}' ({}): its I/O does not match the declaration: {}", build.name,
                            opened.engine_path.empty() ? std::string("in memory") : opened.engine_path, text);
  }
  TO_ASSIGN_OR_RETURN(Engine engine, Engine::from_file(opened.engine, build.plugins));
  return OpenedEngine{std::move(engine),          std::move(opened.key),         std::move(opened.engine_path),
                      opened.cache_hit,           opened.built,                  opened.build_seconds,
                      std::move(opened.explanation), std::move(opened.warnings), std::move(prepared.log)};
}

}  // namespace tensoracle
