// tensoracle package info LIB [--json]
//
// Describes a model package (docs/model-packages.md) without building anything: its graphs with
// their versions, descriptions, default weights and default input shapes. Loading the package
// runs its code (dlopen). Exit status: 0, or 2 when the library is not a loadable package.
#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "build_options.h"
#include "command.h"
#include "core/counted.h"
#include "tensoracle/package.h"

namespace tensoracle::cli {

std::string first_of_several_graphs(const ModelPackage& package) {
  std::string names;
  for (const ModelGraphInfo& graph : package.graphs()) names += (names.empty() ? "" : ", ") + graph.name;
  return fmt::format("package '{}' has {} ({}); using the first, '{}' (--graph chooses another; 'tensoracle package "
                     "info {}' describes them)",
                     package.path(), counted(package.graphs().size(), "graph"), names, package.graphs().front().name,
                     package.path());
}

namespace {

using nlohmann::json;

struct PackageArgs {
  std::string library;
  bool json = false;
};

std::string range_text(const ShapeRange& range) {
  const auto dims = [](const Dims& d) {
    std::string text;
    for (size_t i = 0; i < d.rank(); ++i) text += (i ? "x" : "") + std::to_string(d[i]);
    return text;
  };
  if (range.min == range.max) return dims(range.min);
  return dims(range.min) + ":" + dims(range.opt) + ":" + dims(range.max);
}

json graph_json(const ModelGraphInfo& graph) {
  json inputs = json::array();
  for (const InputDeclaration& input : graph.default_inputs) {
    json profiles = json::array();
    for (const ShapeRange& r : input.profiles)
      profiles.push_back(json{{"min", r.min.values()}, {"opt", r.opt.values()}, {"max", r.max.values()}});
    inputs.push_back(json{{"name", input.name}, {"profiles", profiles}});
  }
  return json{{"name", graph.name},
              {"graph_version", graph.graph_version},
              {"description", graph.description},
              {"default_weights", graph.default_weights},
              {"default_inputs", inputs}};
}

std::string graph_text(const ModelGraphInfo& graph) {
  std::string text = fmt::format("  {}  (version {})\n    {}\n    weights: {}\n", graph.name, graph.graph_version,
                                 graph.description, graph.default_weights.empty() ? "none (pass --weights)" : graph.default_weights);
  if (graph.default_inputs.empty()) return text + "    inputs:  the network's static shapes\n";
  for (const InputDeclaration& input : graph.default_inputs) {
    std::string ranges;
    for (size_t p = 0; p < input.profiles.size(); ++p)
      ranges += fmt::format("{}{}", p ? ", then " : "", range_text(input.profiles[p]));
    text += fmt::format("    input:   {}:{}\n", input.name, ranges);
  }
  return text;
}

void run_info(const PackageArgs& args) {
  auto loaded = ModelPackage::load(args.library);
  if (!loaded.is_ok()) fail_usage(loaded.status().message());
  if (args.json) {
    json graphs = json::array();
    for (const ModelGraphInfo& graph : loaded->graphs()) graphs.push_back(graph_json(graph));
    print_result(json{{"ok", true}, {"path", loaded->path()}, {"name", loaded->name()}, {"graphs", graphs}}.dump(2) + "\n");
    return;
  }
  std::string text =
      fmt::format("package {} ({}): {}\n", loaded->name(), loaded->path(), counted(loaded->graphs().size(), "graph"));
  for (const ModelGraphInfo& graph : loaded->graphs()) text += graph_text(graph);
  print_result(text);
}

void add_package_command(CLI::App& app) {
  CLI::App* package = app.add_subcommand("package", "Describe model packages");
  package->require_subcommand(1);
  auto args = std::make_shared<PackageArgs>();
  CLI::App* info = package->add_subcommand(
      "info", "List a package's graphs: versions, descriptions, default weights and inputs (the --graph names of build "
              "and run). Loading a package runs its code: load only packages you trust.");
  info->add_option("LIB", args->library, "Model package (shared library)")->required();
  info->add_flag("--json", args->json, "Machine-readable output");
  info->callback([args] { run_info(*args); });
}

const CommandRegistration kPackage{"package", 55, &add_package_command};

}  // namespace
}  // namespace tensoracle::cli
