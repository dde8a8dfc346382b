// tensoracle run (--engine FILE | --package LIB | --onnx MODEL [build options]) [--plugin LIB]... --inputs FILE --outputs FILE
//
// Executes an engine on named input arrays (.npz, .npy, .safetensors; arrays that are not engine
// inputs are skipped unread, so a fixture holding inputs and references can be passed as is) and
// writes every output in the format the output's extension names (.npz, .safetensors, or .npy for
// a single output). Exit status: 0 ran, 1 the engine refused to run (inputs outside its profile, an
// execution error), 2 bad usage or unreadable input/engine.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "build_options.h"
#include "core/counted.h"
#include "tensoracle/compare.h"
#include "tensoracle/npy.h"
#include "tensoracle/output_files.h"

namespace tensoracle::cli {
namespace {

struct RunArgs {
  std::string engine_path;
  BuildOptions build;
  std::string inputs;
  std::string outputs;
  size_t profile = 0;
};

// The build options given on the command line, which an engine file makes meaningless.
std::vector<std::string> build_options_given(const CLI::App& cmd) {
  std::vector<std::string> given;
  for (const char* name : {"--policy", "--backend", "--input", "--graph", "--weights", "--optimization-level",
                           "--aux-streams", "--replay-tactics", "--precision", "--keep-fp32", "--quiet"})
    if (cmd.get_option(name)->count() > 0) given.push_back(name);
  return given;
}

Engine load_engine(const RunArgs& args) {
  if (!args.engine_path.empty()) {
    return value_or_fail(Engine::open(args.engine_path, args.build.plugins()));
  }
  auto opened = open_engine(args.build.engine_build(), args.build.cache_policy());
  if (!opened.is_ok()) fail(kExitCheckFailed, opened.status().message());
  for (const std::string& w : opened->warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  if (!args.build.quiet)
    for (const std::string& line : opened->build_log) std::fprintf(stderr, "%s\n", line.c_str());
  return std::move(opened->engine);
}

// Everything the run reads, which its output must not replace.
std::vector<std::string> files_read(const RunArgs& args) {
  std::vector<std::string> files = {args.inputs};
  for (const std::string& file :
       {args.engine_path, args.build.package, args.build.onnx, args.build.weights, args.build.replay_tactics})
    if (!file.empty()) files.push_back(file);
  for (const std::string& plugin : args.build.plugin_libraries) files.push_back(parse_plugin_argument(plugin).library);
  return files;
}

// NaN or inf in an input is legal but rarely meant: say so, without refusing the run.
void warn_about_non_finite_inputs(const NamedArrays& inputs, const std::string& path) {
  for (const auto& [name, array] : inputs) {
    const NonFiniteCounts counts = count_non_finite(array.view());
    if (counts.total() != 0)
      std::fprintf(stderr, "warning: input '%s' in '%s' holds %s (of %lld elements)\n", name.c_str(), path.c_str(),
                   non_finite_text(counts).c_str(), static_cast<long long>(array.element_count()));
  }
}

void run_run(const RunArgs& args, const CLI::App& cmd) {
  if (args.engine_path.empty() == !args.build.has_source())
    fail_usage("give exactly one of --engine, --package and --onnx");
  if (!args.engine_path.empty()) {
    const std::vector<std::string> given = build_options_given(cmd);
    if (!given.empty()) {
      std::string list;
      for (const std::string& name : given) list += (list.empty() ? "" : ", ") + name;
      fail_usage(list + (given.size() == 1 ? " applies" : " apply") +
                 " only when building from --package: an --engine file runs as it was built (its backend, shapes "
                 "and tactics are fixed)");
    }
  }
  // Refused before any engine is built or run.
  if (const Status writable = check_output_path(args.outputs, files_read(args)); !writable.is_ok())
    fail_usage(writable.message());
  const Engine engine = load_engine(args);
  if (args.profile >= engine.num_profiles())
    fail_usage(fmt::format("--profile {}: the engine has {} (0{})", args.profile,
                           counted(engine.num_profiles(), "optimization profile"),
                           engine.num_profiles() == 1 ? "" : fmt::format("..{}", engine.num_profiles() - 1)));
  if (const Status format = check_array_output_path(args.outputs, engine.output_names().size()); !format.is_ok())
    fail_usage(format.message());

  // A shape outside the profile is the engine refusing (exit 1, as docs/engines.md says); any
  // other fault of the inputs file (a missing input, a wrong dtype, corrupt data) is bad input.
  ArrayReadOptions read_options = engine.input_read_options(args.profile);
  bool outside_profile = false;
  read_options.check = [&](const std::string& name, DataType dtype, const Dims& shape) -> Status {
    const auto io = engine.tensor(name);
    if (io.is_ok() && io->dtype != dtype) return engine.check_input(name, dtype, shape, args.profile);
    const Status fits = engine.check_input(name, dtype, shape, args.profile);
    outside_profile = !fits.is_ok();
    return fits;
  };
  auto inputs = read_named_arrays(args.inputs, read_options);
  if (!inputs.is_ok()) fail(outside_profile ? kExitCheckFailed : kExitUsage, inputs.status().message());
  warn_about_non_finite_inputs(*inputs, args.inputs);

  auto exec = engine.create_execution(args.profile);
  if (!exec.is_ok()) fail_usage(exec.status().message());
  // Host arrays in and out; a cuda engine stages them through device memory.
  const NamedArrays outputs = value_or_fail(exec->run_on_host(views_of(*inputs)), kExitCheckFailed);
  if (const Status written = write_named_arrays(args.outputs, views_of(outputs)); !written.is_ok())
    fail_usage(written.message());
  std::string text;
  for (const auto& [name, array] : outputs)
    text += fmt::format("{}: {}{}\n", name, data_type_name(array.dtype()), array.shape().to_string());
  print_result(text);
  throw CommandExit{kExitOk};
}

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Execute an engine (a file, or a package graph opened through the cache) on named input arrays and write its "
             "outputs, ready for `tensoracle compare`.");
  cmd->add_option("--engine", args->engine_path,
                  "Engine file (runs as built: no build options with it but --plugin, which an engine with plugins needs)")
      ->check(CLI::ExistingFile);
  args->build.add_to(cmd);
  cmd->add_option("--inputs", args->inputs,
                  "Input arrays by name (.npz, .npy, .safetensors); arrays that are not engine inputs are skipped, so "
                  "a fixture holding references too can be passed as is")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--outputs", args->outputs,
                  "Where to write the outputs, in the format its extension names: .npz, .safetensors, or .npy for a "
                  "single output (a new or regular file, never one of the inputs)")
      ->required();
  cmd->add_option("--profile", args->profile,
                  "Optimization profile to run in (0-based; a package declares several by repeating --input NAME:...)");
  cmd->callback([args, cmd] { run_run(*args, *cmd); });
}

const CommandRegistration kRun{"run", 35, &add_run_command};

}  // namespace
}  // namespace tensoracle::cli
