// tensoracle onnx check MODEL.onnx [--json]
// tensoracle onnx ops [--json]
//
// `check` lists, without building, what the importer supports in a model: every node with its
// op type and, when refused, why (the unsupported op, attribute, value or type, or the refused
// node it depends on), plus problems of the model itself (structure, inputs, initializers,
// opset). Exit status: 0 every node is supported, 1 some are not, 2 the file cannot be read.
// `ops` lists the op types the importer converts.
#include <fmt/format.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "command.h"
#ifdef TENSORACLE_HAVE_ONNX
#include "tensoracle/onnx.h"
#endif

namespace tensoracle::cli {
namespace {

using nlohmann::json;

struct OnnxArgs {
  std::string path;
  bool json = false;
};

#ifdef TENSORACLE_HAVE_ONNX
void run_check(const OnnxArgs& args) {
  auto checked = check_onnx_model(args.path);
  if (!checked.is_ok()) fail_usage(checked.status().message());
  const OnnxSupportReport& report = *checked;
  // Per op type: how many nodes are supported and how many are not.
  std::map<std::string, std::pair<int, int>> per_op;
  for (const OnnxNodeSupport& n : report.nodes) {
    const std::string op = n.domain.empty() ? n.op_type : n.domain + "." + n.op_type;
    (n.supported ? per_op[op].first : per_op[op].second)++;
  }
  const int exit_code = report.importable() ? kExitOk : kExitCheckFailed;
  if (args.json) {
    json nodes = json::array();
    for (const OnnxNodeSupport& n : report.nodes)
      nodes.push_back({{"name", n.name}, {"op_type", n.op_type}, {"domain", n.domain}, {"supported", n.supported},
                       {"reason", n.reason}});
    json ops = json::object();
    for (const auto& [op, counts] : per_op) ops[op] = {{"supported", counts.first}, {"refused", counts.second}};
    print_result(json{{"ok", report.importable()},
                      {"path", report.path},
                      {"opset", report.opset},
                      {"importable", report.importable()},
                      {"model_problems", report.model_problems},
                      {"ops", ops},
                      {"nodes", nodes}}
                     .dump(2) +
                 "\n");
    throw CommandExit{exit_code};
  }
  int refused = 0;
  for (const OnnxNodeSupport& n : report.nodes) refused += n.supported ? 0 : 1;
  std::string text = fmt::format("ONNX model '{}': opset {}, {} node(s), {} supported, {} refused\n", report.path,
                                 report.opset, report.nodes.size(), report.nodes.size() - static_cast<size_t>(refused), refused);
  for (const std::string& p : report.model_problems) text += fmt::format("model problem: {}\n", p);
  text += "\nops:\n";
  for (const auto& [op, counts] : per_op)
    text += fmt::format("  {:<24} {:>4} supported {:>4} refused\n", op, counts.first, counts.second);
  if (refused > 0) {
    text += "\nrefused nodes:\n";
    for (const OnnxNodeSupport& n : report.nodes)
      if (!n.supported) text += fmt::format("  {} ({}): {}\n", n.name, n.op_type, n.reason);
  }
  text += report.importable() ? "\nthe model can be imported\n" : "\nthe model cannot be imported as it is\n";
  print_result(text);
  throw CommandExit{exit_code};
}

void run_ops(const OnnxArgs& args) {
  const std::vector<std::string> ops = onnx_supported_ops();
  if (args.json) {
    print_result(json{{"ok", true}, {"ops", ops}}.dump(2) + "\n");
  } else {
    std::string text = fmt::format("{} ONNX op types of the default domain are converted (opsets 13 and later):\n", ops.size());
    for (const std::string& op : ops) text += "  " + op + "\n";
    print_result(text);
  }
  throw CommandExit{kExitOk};
}
#else
[[noreturn]] void no_importer() {
  fail_usage("this build of tensoracle has no ONNX importer (configure it with protobuf and onnx-ml.proto: scripts/setup "
             "installs both)");
}
void run_check(const OnnxArgs&) { no_importer(); }
void run_ops(const OnnxArgs&) { no_importer(); }
#endif

void add_onnx_command(CLI::App& app) {
  CLI::App* onnx = app.add_subcommand("onnx", "ONNX models: what the importer supports (docs/onnx.md)");
  onnx->require_subcommand(1);
  auto args = std::make_shared<OnnxArgs>();
  CLI::App* check = onnx->add_subcommand(
      "check", "List every node of an ONNX model and whether it can be imported (and why not), without building; exit 1 "
               "when some cannot");
  check->add_option("MODEL", args->path, "The .onnx file")->required()->check(CLI::ExistingFile);
  check->add_flag("--json", args->json, "Machine-readable output");
  check->callback([args] { run_check(*args); });
  CLI::App* ops = onnx->add_subcommand("ops", "List the ONNX op types the importer converts");
  ops->add_flag("--json", args->json, "Machine-readable output");
  ops->callback([args] { run_ops(*args); });
}

const CommandRegistration kOnnx{"onnx", 65, &add_onnx_command};

}  // namespace
}  // namespace tensoracle::cli
