// The fixed arrays and the candidates' engines (run_context.h).
#include <fmt/format.h>

#include <chrono>
#include <memory>

#include "core/errors.h"
#include "io/strict_json.h"
#include "tensoracle/engine.h"
#include "tensoracle/hashing.h"
#include "tensoracle/npy.h"
#include "workflow/run_context.h"

namespace tensoracle::workflow {

using nlohmann::json;

void RunContext::progress(const std::string& line) const {
  if (options.quiet) return;
  if (options.progress) options.progress(line);
  else std::fprintf(stderr, "%s\n", line.c_str());
}

Result<FixedArrays> read_fixed_arrays(const ArraySelection& selection, const std::vector<std::string>& names,
                                      const std::string& side) {
  auto file = read_named_arrays(selection.file);
  if (!file.is_ok()) return file.status().with_context(side);
  TO_ASSIGN_OR_RETURN(std::string file_sha256, sha256_file_hex(selection.file));
  std::map<std::string, std::string> chosen = selection.arrays;
  if (chosen.empty())
    for (const std::string& n : names) chosen[n] = n;
  std::string held;
  for (const auto& [name, array] : *file) held += (held.empty() ? "" : ", ") + name;
  FixedArrays out;
  out.provenance = {{"file", selection.file}, {"file_sha256", file_sha256}, {"arrays", json::object()}};
  for (const auto& [tensor, array_name] : chosen) {
    if (std::find(names.begin(), names.end(), tensor) == names.end())
      return invalid_argument("{}: '{}' is not an {} of the graph (its {}s: {})", side, tensor,
                              side == "inputs" ? "input" : "output", side == "inputs" ? "input" : "output",
                              fmt::join(names, ", "));
    auto it = file->find(array_name);
    if (it == file->end())
      return invalid_argument("{}: '{}' has no array named '{}' (it holds: {})", side, selection.file, array_name, held);
    const HostArray& a = it->second;
    out.provenance["arrays"][tensor] = {{"array", array_name},
                                        {"dtype", std::string(data_type_name(a.dtype()))},
                                        {"shape", a.shape().values()},
                                        {"sha256", sha256_hex(a.data(), a.byte_size())}};
    out.arrays.emplace(tensor, std::move(it->second));
    file->erase(array_name);
  }
  if (side == "inputs")
    for (const std::string& n : names)
      if (!out.arrays.count(n)) return invalid_argument("inputs: no array is selected for graph input '{}'", n);
  return out;
}

Result<CandidateEngine> open_candidate_engine(RunContext& ctx, const std::string& graph) {
  TO_ASSIGN_OR_RETURN(EngineBuild build, ctx.package.engine_build(graph));
  if (!ctx.pipeline.weights.empty()) build.weights_path = ctx.pipeline.weights;
  build.inputs = ctx.declaration;
  build.backend = ctx.backend;
  build.plugins = ctx.plugins;  // their libraries' hashes enter the engine's key
  if (ctx.pipeline.optimization_level >= 0) build.settings.optimization_level = ctx.pipeline.optimization_level;
  build.settings.fp8_fast_accumulation = ctx.pipeline.fp8_fast_accumulation;
  build.quiet = ctx.options.quiet;
  if (!ctx.options.quiet) {
    // At most a line a second: a long build shows it is alive, a short one stays quiet.
    const RunContext* c = &ctx;
    auto last = std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
    build.progress = [c, graph, last](const std::string& message) {
      const auto now = std::chrono::steady_clock::now();
      if (now - *last < std::chrono::seconds(1)) return;
      *last = now;
      c->progress("    build " + graph + ": " + message);
    };
  }
  TO_ASSIGN_OR_RETURN(OpenedEngine opened, open_engine(build, ctx.options.cache_policy, ctx.options.cache));
  for (const std::string& w : opened.warnings) ctx.progress("    warning: " + w);
  ctx.progress(fmt::format("    engine {}: {}", graph,
                           opened.built ? fmt::format("built in {:.2f} s", opened.build_seconds) : std::string("reused from the cache")));
  const ByteView bytes = opened.engine.file().bytes();
  auto manifest_parsed = parse_strict_json(opened.engine.file().manifest_json(), "the key manifest of " + graph);
  json manifest = manifest_parsed.is_ok() ? *std::move(manifest_parsed) : json(manifest_parsed.status().message());
  json provenance = {{"graph", graph},
                     {"engine_name", build.name},
                     {"key", opened.key},
                     {"engine_path", opened.engine_path},
                     {"engine_sha256", sha256_hex(bytes.data, bytes.size)},
                     {"cache_hit", opened.cache_hit},
                     {"built", opened.built},
                     {"build_seconds", opened.build_seconds},
                     {"explanation", opened.explanation},
                     {"key_manifest", manifest}};
  ctx.engines[graph] = provenance;
  return CandidateEngine{std::move(opened.engine), std::move(provenance)};
}

Result<NamedArrays> run_on_fixed_inputs(const RunContext& ctx, const Engine& engine) {
  TO_ASSIGN_OR_RETURN(Execution exec, engine.create_execution());
  TO_ASSIGN_OR_RETURN(NamedArrays all, exec.run_on_host(views_of(ctx.inputs.arrays)));
  NamedArrays out;
  for (const auto& [name, array] : ctx.reference.arrays) {
    auto it = all.find(name);
    if (it == all.end()) return invalid_argument("the engine has no output '{}' (the reference holds one)", name);
    out.emplace(name, std::move(it->second));
  }
  return out;
}

}  // namespace tensoracle::workflow
