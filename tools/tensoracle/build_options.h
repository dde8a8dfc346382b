// Options shared by `tensoracle build`, `run` and `bench`: which package graph or ONNX model to
// build, with which weights, shapes, backend and cache policy.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "backends/registry.h"
#include "command.h"
#include "passes/passes.h"
#include "plugin_argument.h"
#include "tensoracle/engine.h"
#include "tensoracle/package.h"
#include "tensoracle/plugin_registry.h"
#ifdef TENSORACLE_HAVE_ONNX
#include "tensoracle/onnx.h"
#endif

namespace tensoracle::cli {

// "package 'p' has 3 graphs (a, b, c); using the first, 'a' (--graph chooses another; ...)".
std::string first_of_several_graphs(const ModelPackage& package);

struct BuildOptions {
  std::string package;
  std::string onnx;
  std::string graph;
  std::string weights;
  std::vector<std::string> inputs;
  std::string backend{backends::kReferenceBackend};
  std::string policy = "reuse";
  bool quiet = false;
  std::string replay_tactics;
  int optimization_level = -1;
  int auxiliary_streams = -1;
  std::vector<std::string> plugin_libraries;
  std::string precision = "fp32";
  std::vector<std::string> keep_fp32;
  bool fp8_fast_accumulation = false;

  void add_to(CLI::App* cmd) {
    auto* package_opt = cmd->add_option("--package", package,
                                        "Model package (a shared library, loaded with dlopen: its code runs in this "
                                        "process, so load only packages you trust; docs/model-packages.md)");
    auto* graph_opt = cmd->add_option("--graph", graph, "Graph of the package (default: its first graph; tensoracle package info LIB lists them)");
    auto* onnx_opt = cmd->add_option("--onnx", onnx,
                                     "ONNX model to build instead of a package graph (opsets 13 and later; `tensoracle onnx "
                                     "check MODEL` lists what it supports; docs/onnx.md)");
    onnx_opt->excludes(package_opt);
    graph_opt->needs(package_opt);
    cmd->add_option("--weights", weights, "Weights (.safetensors or .index.json; default: the package's)")->needs(package_opt);
    cmd->add_option("--input", inputs,
                    "Input shape NAME:DIMS or NAME:MIN:OPT:MAX (dims like 1x3x32x32); repeatable. Giving a NAME again "
                    "declares its range in the next optimization profile (every input once per profile); an ONNX "
                    "input with symbolic dims needs one");
    cmd->add_option("--backend", backend, backend_help())->check(CLI::IsMember(backends::backend_names()));
    cmd->add_option("--policy", policy, "Cache policy")->check(CLI::IsMember({"reuse", "rebuild", "require-cached"}));
    cmd->add_flag("--quiet", quiet, "No build progress on stderr");
    cmd->add_option("--optimization-level", optimization_level,
                    "How hard to search tactics, 0..5 (0: first candidate, untimed; n: time up to 2^n per layer)")
        ->check(CLI::Range(0, 5));
    cmd->add_option("--aux-streams", auxiliary_streams,
                    "cuda: 1 (default) lets independent branches run on a second stream beside the main one; 0: one stream")
        ->check(CLI::Range(0, 1));
    cmd->add_option("--plugin", plugin_libraries,
                    "Plugin library (a shared object exporting " TENSORACLE_PLUGIN_ENTRY_POINT ", loaded with dlopen: "
                    "its code runs in this process); repeatable. A build resolves its plugin layers through them; an "
                    "engine that needs plugins runs only with the libraries that provide them. A library whose plugins "
                    "declare bundle kernels loads its cubin bundle too: <NAME>_bundle beside lib<NAME>.so, or the "
                    "directory named as LIB:BUNDLE_DIR (docs/plugins.md)")
        ->type_name("LIB[:BUNDLE_DIR]");
    cmd->add_option("--precision", precision,
                    "Compute precision of an fp32 network: fp32 (default: the network's own types), fp16 or bf16 "
                    "(layers converted, inputs and outputs stay fp32; docs/precision.md)")
        ->check(CLI::IsMember({"fp32", "fp16", "bf16"}));
    cmd->add_option("--keep-fp32", keep_fp32,
                    "With --precision fp16/bf16: the op kinds that stay fp32, comma-separated, replacing the default "
                    "keep-list (reduce.sum,reduce.prod,unary.exp,elementwise.pow); an op kind (softmax) or a kind "
                    "with its function (unary.exp); `none` keeps nothing")
        ->delimiter(',');
    cmd->add_flag("--fp8-fast-accumulation", fp8_fast_accumulation,
                  "cuda: Q/DQ-fused fp8 matrix products may accumulate in cuBLASLt's fast mode (faster; its partial "
                  "sums keep about 14 bits across the whole sum instead of being promoted to fp32; the tactic timer "
                  "still picks the fastest candidate; docs/quantization.md)");
    cmd->add_option("--replay-tactics", replay_tactics,
                    "Engine file whose recorded tactic choices this build replays instead of timing (a deterministic rebuild)")
        ->check(CLI::ExistingFile);
  }

  // Whether a package or an ONNX model was given.
  bool has_source() const { return !package.empty() || !onnx.empty(); }

  // The package's (or ONNX model's) EngineBuild with the command line's overrides; exits 2 on bad
  // usage.
  EngineBuild engine_build() const {
    if (const Status cache = CacheStore().settings_status(); !cache.is_ok()) fail_usage(cache.message());
    // Bad usage, found before the package is loaded (the builder also checks the record's backend).
    if (!replay_tactics.empty())
      if (auto record = EngineFile::open(replay_tactics); !record.is_ok())
        fail_usage("--replay-tactics: " + record.status().message());
    if (!package.empty() == !onnx.empty()) fail_usage("give exactly one of --package and --onnx");
    auto build = onnx.empty() ? package_build() : onnx_build();
    build.plugins = plugins();
    if (!inputs.empty()) build.inputs = value_or_fail(declare_inputs(inputs));
    build.backend = backend;
    build.quiet = quiet;
    if (optimization_level >= 0) build.settings.optimization_level = optimization_level;
    if (auxiliary_streams >= 0) build.settings.auxiliary_streams = auxiliary_streams;
    build.settings.precision = value_or_fail(parse_data_type(precision));
    build.settings.fp8_fast_accumulation = fp8_fast_accumulation;
    if (!keep_fp32.empty()) {
      if (build.settings.precision == DataType::kFloat32) fail_usage("--keep-fp32 needs --precision fp16 or bf16");
      std::vector<std::string> keep;
      for (const std::string& entry : keep_fp32)
        if (entry != "none") {
          if (const Status checked = passes::check_keep_fp32_entry(entry); !checked.is_ok()) fail_usage("--keep-fp32: " + checked.message());
          keep.push_back(entry);
        }
      build.settings.keep_fp32 = keep;
    }
    if (!replay_tactics.empty()) {
      build.settings.deterministic_replay = true;
      build.settings.tactic_record = replay_tactics;
    }
    return build;
  }

  // The ONNX model's EngineBuild, named after the file (exits 2 when it cannot be imported).
  EngineBuild onnx_build() const {
#ifdef TENSORACLE_HAVE_ONNX
    const ImportedModel model = value_or_fail(network_from_onnx(onnx));
    std::string name = onnx.substr(onnx.find_last_of('/') + 1);
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".onnx") == 0) name.resize(name.size() - 5);
    return value_or_fail(onnx_engine_build(model, name));
#else
    fail_usage("--onnx: this build of tensoracle has no ONNX importer (configure with protobuf and onnx-ml.proto: "
               "scripts/setup installs them)");
#endif
  }

  EngineBuild package_build() const {
    auto loaded = ModelPackage::load(package);
    if (!loaded.is_ok()) fail_usage(loaded.status().message());
    std::string graph_name = graph;
    if (graph_name.empty()) {
      if (loaded->graphs().empty()) fail_usage("package '" + package + "' has no graphs");
      graph_name = loaded->graphs().front().name;
      if (loaded->graphs().size() > 1 && !quiet) std::fprintf(stderr, "note: %s\n", first_of_several_graphs(*loaded).c_str());
    }
    auto build = loaded->engine_build(graph_name);
    if (!build.is_ok()) fail_usage(build.status().message());
    if (!weights.empty()) build->weights_path = weights;
    return *std::move(build);
  }

  // The --plugin libraries with their bundles, loaded in order (exits 2 naming the library and the
  // reason when one cannot be loaded).
  PluginRegistry plugins() const {
    PluginRegistry registry;
    for (const std::string& value : plugin_libraries) {
      const PluginArgument plugin = parse_plugin_argument(value);
      if (const Status loaded = registry.load_library(plugin.library, plugin.options); !loaded.is_ok())
        fail_usage("--plugin: " + loaded.message());
    }
    return registry;
  }

  CachePolicy cache_policy() const { return value_or_fail(parse_cache_policy(policy)); }

  // The backends of this build, from the registry: "Backend (default: cpu): cpu = the reference: ...".
  static std::string backend_help() {
    std::string help = "Backend (default: " + std::string(backends::kReferenceBackend) + "):";
    for (const backends::BackendInfo& info : backends::backend_registry())
      help += std::string("\n  ") + info.name + " = " + info.description;
    return help + "\n(the backends of a build are chosen when tensoracle is configured: docs/backends.md)";
  }
};

}  // namespace tensoracle::cli
