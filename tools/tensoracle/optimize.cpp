// tensoracle optimize PIPELINE.toml [--backend cpu|cuda] [--out DIR] [--package LIB] [--plugin LIB]...
//                     [--policy P] [--quiet] [--json]
//
// Runs the four-stage workflow of a pipeline file (docs/workflow.md): stage 1 fp32 vs the fixed
// reference, stage 2 lower precision vs the fp32 engine, stage 3 replacements re-gated with the
// same limits, stage 4 timing against the fp32 engine. Writes DIR/report.json and
// DIR/report.html; prints one line per decision (or, with --json, report.json) on stdout and
// progress on stderr. Exit status: 0 stage 1 passed and every later stage that ran accepted a
// candidate, 1 a stage rejected every candidate it had, 2 bad input.
#include <cstdio>
#include <memory>

#include "backends/registry.h"
#include "command.h"
#include "tensoracle/workflow.h"

namespace tensoracle::cli {
namespace {

struct OptimizeArgs {
  std::string pipeline;
  std::string backend;
  std::string out = "optimize-report";
  std::string package;
  std::vector<std::string> plugins;
  std::string policy = "reuse";
  bool quiet = false;
  bool json = false;
};

void run_optimize(const OptimizeArgs& args) {
  auto pipeline = load_pipeline(args.pipeline);
  if (!pipeline.is_ok()) fail_usage(pipeline.status().message());
  WorkflowOptions options;
  options.backend = args.backend;
  options.package = args.package;
  options.plugins = args.plugins;
  options.cache_policy = value_or_fail(parse_cache_policy(args.policy));
  options.quiet = args.quiet;
  auto outcome = run_workflow(*pipeline, options);
  if (!outcome.is_ok()) fail_usage(outcome.status().message());
  const Status written = write_workflow_reports(*outcome, args.out);
  if (!written.is_ok()) fail_usage(written.message());
  print_result(args.json ? outcome->report_json
                         : outcome->summary + "reports: " + args.out + "/report.json, " + args.out + "/report.html\n");
  throw CommandExit{outcome->exit_status};
}

void add_optimize_command(CLI::App& app) {
  auto args = std::make_shared<OptimizeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "optimize",
      "Run the four-stage workflow of a pipeline file (docs/workflow.md): 1 fp32 engine vs the fixed reference, 2 "
      "lower-precision candidates vs the fp32 engine (with model-specific measures), 3 replacements re-gated with the "
      "same limits, 4 interleaved timing against the fp32 engine under isolated load. Inputs and references never "
      "change, no limit is relaxed, a failed gate keeps the accepted implementation. Writes report.json and "
      "report.html. Exit 0: stage 1 passed and every later stage that ran accepted a candidate; 1: a stage rejected "
      "all of its candidates; 2: bad input.");
  cmd->add_option("PIPELINE", args->pipeline, "Pipeline file (TOML)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--backend", args->backend, "Backend, over the pipeline's")->check(CLI::IsMember(backends::backend_names()));
  cmd->add_option("--out", args->out, "Directory for report.json and report.html")->capture_default_str();
  cmd->add_option("--package", args->package, "Model package, over the pipeline's (e.g. another build directory's)");
  cmd->add_option("--plugin", args->plugins,
                  "Plugin library, loaded after the pipeline's [model] plugins; repeatable. One registry of every library "
                  "serves every build of the run; a library that does not load, or registers a plugin another one did, "
                  "exits 2 (docs/workflow.md)");
  cmd->add_option("--policy", args->policy, "Cache policy for the engines")
      ->check(CLI::IsMember({"reuse", "rebuild", "require-cached"}))
      ->capture_default_str();
  cmd->add_flag("--quiet", args->quiet, "No progress on stderr");
  cmd->add_flag("--json", args->json, "Print report.json on stdout instead of the decision lines");
  cmd->callback([args] { run_optimize(*args); });
}

const CommandRegistration kOptimize{"optimize", 50, &add_optimize_command};

}  // namespace
}  // namespace tensoracle::cli
