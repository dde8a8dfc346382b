// tensoracle build (--package LIB [--graph NAME] [--weights FILE] | --onnx MODEL) [--input SPEC]... [--backend B]
//                  [--plugin LIB]... [--policy P] [--json]
//
// Builds (or reuses) a package graph's engine through the cache. Exit status: 0 the engine is in
// the cache, 1 the build or the cache refused (e.g. require-cached and absent), 2 bad usage.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "build_options.h"

namespace tensoracle::cli {
namespace {

struct BuildArgs {
  BuildOptions options;
  bool json = false;
};

void run_build(const BuildArgs& args) {
  const EngineBuild build = args.options.engine_build();
  auto opened = open_engine(build, args.options.cache_policy());
  if (!opened.is_ok()) fail(kExitCheckFailed, opened.status().message());
  for (const std::string& w : opened->warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  if (args.json) {
    nlohmann::json out{{"ok", true},
                       {"engine_name", build.name},
                       {"key", opened->key},
                       {"engine_path", opened->engine_path},
                       {"cache_hit", opened->cache_hit},
                       {"built", opened->built},
                       {"build_seconds", opened->build_seconds},
                       {"explanation", opened->explanation},
                       {"warnings", opened->warnings},
                       {"build_log", opened->build_log}};
    print_result(out.dump(2) + "\n");
  } else {
    std::string log;
    for (const std::string& line : opened->build_log) log += line + "\n";
    print_result(fmt::format("{} engine '{}' ({}){}\nkey:    {}\nengine: {}\n{}\n{}", opened->cache_hit ? "reused" : "built",
                                  build.name, build.backend,
                                  opened->built ? fmt::format(" in {:.3f} s", opened->build_seconds) : std::string(),
                                  opened->key, opened->engine_path.empty() ? "(in memory only)" : opened->engine_path,
                                  opened->explanation, log));
  }
  throw CommandExit{kExitOk};
}

void add_build_command(CLI::App& app) {
  auto args = std::make_shared<BuildArgs>();
  CLI::App* cmd = app.add_subcommand(
      "build", "Build a model package's (or an ONNX model's) engine through the cache (or reuse the cached one); prints the key, the engine "
               "path, whether it was a cache hit and, on a miss, why.");
  args->options.add_to(cmd);
  cmd->add_flag("--json", args->json, "Machine-readable output");
  cmd->callback([args] { run_build(*args); });
}

const CommandRegistration kBuild{"build", 30, &add_build_command};

}  // namespace
}  // namespace tensoracle::cli
