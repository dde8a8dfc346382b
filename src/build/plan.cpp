// plan_engine and build_serialized_engine (build.h): the prepared build planned by its backend
// (through the registry) and assembled into an engine file.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>

#include "backends/registry.h"
#include "core/errors.h"
#include "tensoracle/build.h"
#include "tensoracle/engine_file.h"

namespace tensoracle {

namespace {

// Long builds say what they are doing about once a second, unless quiet or told otherwise.
BuildProgressFn progress_reporter(const EngineBuild& build) {
  if (build.progress) return build.progress;
  if (build.quiet) return nullptr;
  using Clock = std::chrono::steady_clock;
  auto last = std::make_shared<Clock::time_point>(Clock::now());
  std::string name = build.name;
  return [last, name](const std::string& message) {
    const auto now = Clock::now();
    if (now - *last < std::chrono::seconds(1)) return;
    *last = now;
    std::fprintf(stderr, "tensoracle build %s: %s\n", name.c_str(), message.c_str());
  };
}

EngineWriter writer_for(const PreparedBuild& prepared) {
  EngineWriter writer;
  writer.set_manifest_json(manifest_to_json(prepared.manifest));
  writer.set_environment(prepared.manifest.environment, prepared.manifest.plugins);
  writer.set_io_table(prepared.io_table);
  return writer;
}

}  // namespace

Result<EngineWriter> plan_engine(const EngineBuild& build, const PreparedBuild& prepared) {
  const std::string what = fmt::format("engine '{}'", build.name);
  auto backend = backends::create_backend(prepared.manifest.environment.backend);
  if (!backend.is_ok()) return backend.status().with_context(what);
  // Deterministic replay: the record must be an engine this backend built.
  std::optional<EngineFile> record;
  if (build.settings.deterministic_replay) {
    auto opened = EngineFile::open(build.settings.tactic_record);
    if (!opened.is_ok()) return opened.status().with_context(fmt::format("{}: the tactic record", what));
    if (opened->environment().backend != (*backend)->name())
      return invalid_argument("{}: tactic record '{}' is a '{}' engine; replay needs a '{}' engine", what,
                              build.settings.tactic_record, opened->environment().backend, (*backend)->name());
    record = *std::move(opened);
  }
  const backends::PlanRequest request{prepared.network, prepared.manifest.profiles, build.settings, progress_reporter(build),
                                      record ? &*record : nullptr};
  auto plan = (*backend)->plan(request);
  if (!plan.is_ok()) return plan.status().with_context(what);
  EngineWriter writer = writer_for(prepared);
  writer.set_plan(std::move(plan->json));
  for (backends::PlanBlob& blob : plan->blobs)
    TO_RETURN_IF_ERROR(writer.add_blob(blob.name, blob.view.data, blob.view.byte_size(), blob.owner));
  return writer;
}

Result<std::string> build_serialized_engine(const EngineBuild& build) {
  TO_ASSIGN_OR_RETURN(PreparedBuild prepared, prepare_build(build));
  TO_ASSIGN_OR_RETURN(EngineWriter writer, plan_engine(build, prepared));
  return writer.to_bytes();
}

}  // namespace tensoracle
