// tensoracle bundle compile | inspect | inspect-wheel — cubin bundles (docs/bundles.md).
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "tensoracle/bundle.h"

namespace tensoracle::cli {
namespace {

struct CompileArgs {
  std::string name, version, out, nvcc;
  std::vector<std::string> sources, architectures, extra_flags;
  unsigned jobs = 0;
};

struct InspectArgs {
  std::string target, plugin;
  bool json = false;
  bool check_no_tf32 = false;
  std::string cuobjdump;
};

void run_compile(const CompileArgs& args) {
  CompileBundleOptions options;
  options.name = args.name;
  options.version = args.version;
  options.sources = args.sources;
  options.out_dir = args.out;
  options.nvcc = args.nvcc;
  options.extra_flags = args.extra_flags;
  options.jobs = args.jobs;
  for (const std::string& name : args.architectures) {
    auto arch = parse_gpu_arch(name);
    if (!arch) fail_usage(arch.status().message());
    options.architectures.push_back(*arch);
  }
  auto manifest = compile_bundle(options);
  // Bad sources, flags or architectures are the caller's to fix; report them as usage errors.
  if (!manifest) fail_usage(manifest.status().message());
  std::printf("wrote %s: bundle %s %s, %zu cubin(s)\n", args.out.c_str(), manifest->name.c_str(),
              manifest->version.c_str(), manifest->cubins.size());
  for (const BundleCubin& cubin : manifest->cubins) {
    std::string kernels;
    for (const std::string& kernel : cubin.kernels) kernels += (kernels.empty() ? "" : ", ") + kernel;
    std::printf("  %-28s %8llu bytes  %s\n", cubin.path.c_str(), static_cast<unsigned long long>(cubin.size),
                kernels.c_str());
  }
}

// A plugin library (a shared object) rather than a declaration (JSON): it starts with the ELF magic.
bool is_elf_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  char magic[4] = {};
  return file.read(magic, sizeof magic) && magic[0] == '\x7f' && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F';
}

void run_inspect(const InspectArgs& args, bool wheel) {
  InspectOptions options;
  options.check_no_tf32 = args.check_no_tf32;
  options.cuobjdump = args.cuobjdump;
  if (!args.plugin.empty() && is_elf_file(args.plugin)) {
    auto needs = plugin_library_bundle_needs(args.plugin);
    if (!needs) fail_usage(needs.status().message());
    // Nothing to check is not a pass: the library was named to be checked against this bundle.
    if (needs->empty())
      fail_usage("plugin library '" + args.plugin +
                 "' registers no plugin that needs bundle kernels (PluginCreator::bundle is empty for each)");
    options.plugins = *needs;
  } else if (!args.plugin.empty()) {
    auto declaration = read_plugin_declaration(args.plugin);
    if (!declaration) fail_usage(declaration.status().message());
    options.plugin = *declaration;
  }
  auto report = wheel ? inspect_wheel(args.target, options) : inspect_bundle(args.target, options);
  if (!report) fail_usage(report.status().message());
  print_result(args.json ? inspect_report_to_json(*report) : inspect_report_to_text(*report));
  throw CommandExit{report->passed() ? kExitOk : kExitCheckFailed};
}

void add_inspect_options(CLI::App& command, const std::shared_ptr<InspectArgs>& args) {
  command.add_option("--plugin", args->plugin,
                     "plugin declaration (JSON) or plugin library (.so): also check every kernel it needs (each of the library's "
                     "plugins) on every architecture it declares")
      ->check(CLI::ExistingFile);
  command.add_flag("--json", args->json, "print the report as JSON");
  command.add_flag("--check-no-tf32", args->check_no_tf32,
                   "disassemble each cubin (cuobjdump -sass) and fail any that uses TF32 instructions");
  command.add_option("--cuobjdump", args->cuobjdump,
                     "cuobjdump to use for --check-no-tf32 (default: $TENSORACLE_CUOBJDUMP, beside nvcc, $CUDA_HOME/bin, "
                     "$CUDA_PATH/bin, $PATH, NVIDIA's wheel in the project's .venv, /usr/local/cuda/bin)");
}

void add_bundle_command(CLI::App& app) {
  CLI::App* bundle = app.add_subcommand("bundle", "Compile and inspect cubin bundles for plugins");
  bundle->require_subcommand(1);

  auto compile_args = std::make_shared<CompileArgs>();
  CLI::App* compile = bundle->add_subcommand(
      "compile", "Compile kernel sources into a cubin bundle (one cubin per source and architecture)");
  compile->add_option("--name", compile_args->name, "bundle name")->required();
  compile->add_option("--version", compile_args->version, "bundle version")->required();
  compile->add_option("--src", compile_args->sources, "a .cu source (repeat for several)")->required();
  compile->add_option("--arch", compile_args->architectures, "architectures, e.g. sm_80,sm_86,sm_89,sm_90")
      ->required()
      ->delimiter(',');
  compile->add_option("--out", compile_args->out, "bundle directory to create or replace")->required();
  compile->add_option("--nvcc", compile_args->nvcc,
                      "nvcc to use (default: $TENSORACLE_NVCC, $CUDA_HOME/bin, $CUDA_PATH/bin, $PATH, "
                      "/usr/local/cuda/bin)");
  compile->add_option("-j,--jobs", compile_args->jobs, "nvcc processes at once (default: one per CPU core)");
  compile->add_option("extra_flags", compile_args->extra_flags, "extra nvcc flags, after --");
  compile->callback([compile_args] { run_compile(*compile_args); });

  auto inspect_args = std::make_shared<InspectArgs>();
  CLI::App* inspect = bundle->add_subcommand(
      "inspect", "Check a bundle directory; exit 0 if every check passes, 1 if one fails, 2 on bad input");
  inspect->add_option("DIR", inspect_args->target, "bundle directory")->required();
  add_inspect_options(*inspect, inspect_args);
  inspect->callback([inspect_args] { run_inspect(*inspect_args, /*wheel=*/false); });

  auto wheel_args = std::make_shared<InspectArgs>();
  CLI::App* wheel = bundle->add_subcommand(
      "inspect-wheel", "Check every bundle inside a wheel or zip in place; exit codes as for inspect");
  wheel->add_option("FILE", wheel_args->target, "wheel or zip file")->required();
  add_inspect_options(*wheel, wheel_args);
  wheel->callback([wheel_args] { run_inspect(*wheel_args, /*wheel=*/true); });
}

const CommandRegistration kRegistration{"bundle", 60, &add_bundle_command};

}  // namespace
}  // namespace tensoracle::cli
