// tensoracle run (--engine FILE | --package LIB [build options]) --inputs FILE --outputs FILE
//
// Executes an engine on named input arrays (.npz, .npy, .safetensors; arrays that are not engine
// inputs are ignored, so a fixture holding inputs and references can be passed as is) and writes
// every output (.npz, or .safetensors by extension). Exit status: 0 ran, 1 the engine refused to
// run (shapes outside its profile, execution error), 2 bad usage or unreadable input/engine.
#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "build_options.h"
#include "tensoracle/npy.h"
#include "tensoracle/safetensors.h"

namespace tensoracle::cli {
namespace {

struct RunArgs {
  std::string engine_path;
  BuildOptions build;
  std::string inputs;
  std::string outputs;
  size_t profile = 0;
};

[[noreturn]] void fail_check(const std::string& message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  throw CommandExit{kExitCheckFailed};
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Engine load_engine(const RunArgs& args) {
  if (!args.engine_path.empty()) {
    auto engine = Engine::open(args.engine_path);
    if (!engine.is_ok()) fail_usage(engine.status().message());
    return std::move(engine).value();
  }
  auto opened = open_engine(args.build.engine_build(), args.build.cache_policy());
  if (!opened.is_ok()) fail_check(opened.status().message());
  for (const std::string& w : opened->warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  return std::move(opened->engine);
}

void run_run(const RunArgs& args) {
  if (args.engine_path.empty() == args.build.package.empty()) fail_usage("give exactly one of --engine and --package");
  const Engine engine = load_engine(args);
  auto inputs = read_named_arrays(args.inputs);
  if (!inputs.is_ok()) fail_usage(inputs.status().message());

  auto exec = engine.create_execution(args.profile);
  if (!exec.is_ok()) fail_usage(exec.status().message());
  for (const std::string& name : engine.input_names()) {
    auto it = inputs->find(name);
    if (it == inputs->end()) fail_usage(fmt::format("'{}' has no array named '{}' (an input of the engine)", args.inputs, name));
    const DataType want = engine.tensor(name)->dtype;
    if (it->second.dtype() != want)
      fail_usage(fmt::format("input '{}' in '{}' is {}, the engine takes {}", name, args.inputs, data_type_name(it->second.dtype()),
                             data_type_name(want)));
  }
  // Host arrays in and out; a cuda engine stages them through device memory.
  auto ran = exec->run_on_host(views_of(*inputs));
  if (!ran.is_ok()) fail_check(ran.status().message());
  NamedArrays outputs = std::move(ran).value();
  const Status written = ends_with(args.outputs, ".safetensors") ? write_safetensors(args.outputs, views_of(outputs))
                                                                  : write_npz(args.outputs, views_of(outputs));
  if (!written.is_ok()) fail_usage(written.message());
  for (const auto& [name, array] : outputs)
    std::printf("%s: %s%s\n", name.c_str(), std::string(data_type_name(array.dtype())).c_str(), array.shape().to_string().c_str());
  throw CommandExit{kExitOk};
}

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Execute an engine (a file, or a package graph opened through the cache) on named input arrays and write its "
             "outputs, ready for `tensoracle compare`.");
  cmd->add_option("--engine", args->engine_path, "Engine file")->check(CLI::ExistingFile);
  args->build.add_to(cmd, false);
  cmd->add_option("--inputs", args->inputs, "Input arrays by name (.npz, .npy, .safetensors)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--outputs", args->outputs, "Where to write the outputs (.npz, or .safetensors)")->required();
  cmd->add_option("--profile", args->profile, "Optimization profile");
  cmd->callback([args] { run_run(*args); });
}

const CommandRegistration kRun{"run", 35, &add_run_command};

}  // namespace
}  // namespace tensoracle::cli
