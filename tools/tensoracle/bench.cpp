// tensoracle bench (--engine FILE | --package LIB [build options]) [--inputs FILE] [--batch N]
//                  [--baseline OTHER [--placements N]] [--mode M]... [--warmup N] [--iterations N] [--group N]
//                  [--profile-layers] [--no-load-check] [--json]
//
// Times an engine (docs/bench.md): per-call latency and back-to-back throughput with their
// statistics, the NVML load check on cuda, and with --baseline an interleaved A/B run with a
// bootstrap confidence interval on the ratio of medians. Exit status: 0 a valid run, 1 the run is
// invalid (load present) or the engine failed, 2 bad usage or unreadable input.
#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdio>
#include <functional>
#include <memory>

#include "build_options.h"
#include "tensoracle/bench.h"
#include "tensoracle/npy.h"

namespace tensoracle::cli {
namespace {

struct BenchArgs {
  std::string engine_path;
  BuildOptions build;
  std::string inputs;
  int64_t batch = 0;
  std::string baseline;
  std::vector<std::string> modes = {"latency", "throughput"};
  BenchSettings settings;
  bool json = false;
};

[[noreturn]] void fail_check(const std::string& message) { fail(kExitCheckFailed, message); }

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The arrays to time on: --inputs (at --batch when given), else none yet (synthetic once the
// engine is known).
NamedArrays fixed_inputs(const BenchArgs& args) {
  if (args.inputs.empty()) return {};
  NamedArrays arrays = value_or_fail(read_named_arrays(args.inputs));
  if (args.batch == 0) return arrays;
  auto batched = arrays_at_batch(views_of(arrays), args.batch);
  if (!batched.is_ok()) fail_usage(fmt::format("'{}': {}", args.inputs, batched.status().message()));
  return *std::move(batched);
}

// A package graph's build declared for exactly the shapes timed, unless --input says otherwise.
EngineBuild package_build(const BenchArgs& args, const std::string& graph, const NamedArrays& inputs) {
  BuildOptions options = args.build;
  if (!graph.empty()) options.graph = graph;
  EngineBuild build = options.engine_build();
  if (!args.build.inputs.empty()) return build;
  std::vector<InputDeclaration> declared = build.inputs;
  if (!inputs.empty()) {
    build.inputs.clear();
    for (const InputDeclaration& d : declared) {
      auto it = inputs.find(d.name);
      if (it == inputs.end()) fail_usage(fmt::format("'{}' has no array named '{}' (an input of the engine)", args.inputs, d.name));
      build.add_input(d.name, it->second.shape());
    }
  } else if (args.batch > 0) {
    build.inputs.clear();
    for (const InputDeclaration& d : declared) {
      if (d.profiles.empty() || d.profiles.front().opt.rank() == 0) fail_usage("--batch: input '" + d.name + "' has no batch dim");
      Dims shape = d.profiles.front().opt;
      shape[0] = args.batch;
      build.add_input(d.name, shape);
    }
  }
  return build;
}

Engine open_package_engine(const BenchArgs& args, const std::string& graph, const NamedArrays& inputs) {
  const EngineBuild build = package_build(args, graph, inputs);
  if (!args.json) std::fprintf(stderr, "opening engine '%s' (%s) through the cache\n", build.name.c_str(), build.backend.c_str());
  auto opened = open_engine(build, args.build.cache_policy());
  if (!opened.is_ok()) fail_check(opened.status().message());
  for (const std::string& w : opened->warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  return std::move(opened->engine);
}

Engine open_engine_file(const std::string& path, const BuildOptions& options) {
  return value_or_fail(Engine::open(path, options.plugins()));
}

// `count` copies of one engine, each loaded on its own, so each placement of an A/B run has its
// weights at its own addresses too (a package engine builds once, then comes from the cache).
std::vector<Engine> placements_of(const std::function<Engine()>& load, int count) {
  std::vector<Engine> engines;
  for (int i = 0; i < count; ++i) engines.push_back(load());
  return engines;
}

std::vector<const Engine*> pointers_to(const std::vector<Engine>& engines) {
  std::vector<const Engine*> pointers;
  for (const Engine& e : engines) pointers.push_back(&e);
  return pointers;
}

void run_bench(BenchArgs& args) {
  if (args.engine_path.empty() == !args.build.has_source())
    fail_usage("give exactly one of --engine, --package and --onnx");
  args.settings.modes.clear();
  for (const std::string& m : args.modes) {
    auto mode = parse_timing_mode(m);
    if (!mode.is_ok()) fail_usage("--mode: " + mode.status().message());
    args.settings.modes.push_back(*mode);
  }
  NamedArrays inputs = fixed_inputs(args);
  const Engine engine = args.engine_path.empty() ? open_package_engine(args, "", inputs) : open_engine_file(args.engine_path, args.build);
  if (inputs.empty()) {
    inputs = value_or_fail(synthetic_inputs(engine, args.settings.profile, args.batch));
  }

  std::string text;
  bool valid = true;
  if (args.baseline.empty()) {
    if (!args.json) std::fprintf(stderr, "timing: %d warm-up calls, %d samples per mode\n", args.settings.warmup, args.settings.iterations);
    auto report = bench_engine(engine, views_of(inputs), args.settings);
    if (!report.is_ok()) fail_check(report.status().message());
    valid = report->valid;
    text = args.json ? bench_report_json(*report, args.settings) + "\n" : bench_report_text(*report);
  } else {
    // OTHER: an engine file, or (with --package) another graph of the same package.
    const bool file = is_file(args.baseline);
    if (!file && args.build.package.empty())
      fail_usage(fmt::format("--baseline '{}' is not a file (a graph name needs --package)", args.baseline));
    const int copies = args.settings.placements - 1;  // `engine` is the candidate's first placement
    std::vector<Engine> candidates = placements_of(
        [&] { return args.engine_path.empty() ? open_package_engine(args, "", inputs) : open_engine_file(args.engine_path, args.build); },
        copies);
    const std::vector<Engine> baselines = placements_of(
        [&] { return file ? open_engine_file(args.baseline, args.build) : open_package_engine(args, args.baseline, inputs); },
        args.settings.placements);
    std::vector<const Engine*> candidate_placements = pointers_to(candidates);
    candidate_placements.insert(candidate_placements.begin(), &engine);
    if (!args.json)
      std::fprintf(stderr,
                   "timing candidate and baseline interleaved on %d placements each: %d warm-up calls each, %d rounds "
                   "per mode\n",
                   args.settings.placements, args.settings.warmup, args.settings.iterations);
    auto report = bench_ab(candidate_placements, pointers_to(baselines), views_of(inputs), args.settings);
    if (!report.is_ok()) fail_check(report.status().message());
    valid = report->valid;
    text = args.json ? ab_report_json(*report, args.settings) + "\n" : ab_report_text(*report);
  }
  print_result(text);
  throw CommandExit{valid ? kExitOk : kExitCheckFailed};
}

void add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Time an engine: per-call latency (each call waited for) and back-to-back throughput, min/median/mean/p90/p99/"
      "max/stddev/cv and items/s; CUDA events and graph replay on cuda, the host clock on cpu (labelled); an NVML "
      "check that nothing else loads the GPU (a loaded run is invalid: exit 1); --baseline times two engines "
      "interleaved and gives the ratio of medians with a bootstrap confidence interval.");
  cmd->add_option("--engine", args->engine_path, "Engine file")->check(CLI::ExistingFile);
  args->build.add_to(cmd);
  cmd->add_option("--inputs", args->inputs,
                  "Input arrays by name (.npz, .npy, .safetensors; default: seeded synthetic inputs at the profile's opt shape)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--batch", args->batch,
                  "Items per call: dim 0 of every input (--inputs rows repeat cyclically); with --package and no --input "
                  "the engine is declared for exactly the timed shapes")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--baseline", args->baseline,
                  "Time against OTHER interleaved: an engine file, or with --package another graph of the package");
  cmd->add_option("--mode", args->modes, "Timing modes: latency, throughput (repeatable; default both)")->delimiter(',');
  cmd->add_option("--warmup", args->settings.warmup, "Untimed calls first (the first captures the CUDA graph)")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--iterations", args->settings.iterations, "Timed samples per mode (with --baseline: rounds)")
      ->capture_default_str()->check(CLI::Range(2, 10000000));
  cmd->add_option("--placements", args->settings.placements,
                  "With --baseline: copies of each engine loaded apart (own weights, buffers, stream); rounds cycle "
                  "through them and the interval resamples them, so where memory lands is not taken for a difference")
      ->capture_default_str()->check(CLI::Range(1, 64));
  cmd->add_option("--group", args->settings.throughput_group, "Calls back to back per throughput sample")
      ->capture_default_str()->check(CLI::Range(1, 1000000));
  cmd->add_option("--profile", args->settings.profile, "Optimization profile of the engine");
  cmd->add_flag("--profile-layers", args->settings.profile_layers, "Also time each step of the engine alone (cuda)");
  cmd->add_flag("!--no-load-check", args->settings.load_check, "Skip the NVML load check (the run is then not claimed isolated)");
  cmd->add_option("--max-utilization", args->settings.max_utilization_before_percent,
                  "GPU utilization (%) before the run above which it is invalid")
      ->capture_default_str()->check(CLI::Range(0.0, 100.0));
  cmd->add_option("--confidence", args->settings.bootstrap.confidence, "Confidence level of the ratio's interval")
      ->capture_default_str()->check(CLI::Range(0.5, 0.999));
  cmd->add_option("--resamples", args->settings.bootstrap.resamples, "Bootstrap resamples")
      ->capture_default_str()->check(CLI::Range(100, 1000000));
  cmd->add_option("--seed", args->settings.bootstrap.seed, "Bootstrap seed")->capture_default_str();
  cmd->add_flag("--json", args->json, "Print one JSON object instead of the tables");
  cmd->callback([args] { run_bench(*args); });
}

const CommandRegistration kBench{"bench", 45, &add_bench_command};

}  // namespace
}  // namespace tensoracle::cli
