// tensoracle compare CANDIDATE REFERENCE [--atol A --rtol R] [--limits FILE] [--metric NAME] [--json]
//
// Compares named output arrays (.npy, .npz, .safetensors) and gates them against limits.
// Exit status: 0 passed, 1 the gate failed, 2 bad usage or unreadable input.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.h"
#include "tensoracle/compare.h"
#include "tensoracle/npy.h"

namespace tensoracle::cli {
namespace {

struct CompareArgs {
  std::string candidate;
  std::string reference;
  std::optional<double> atol;
  std::optional<double> rtol;
  std::string limits_path;
  std::vector<std::string> metrics;
  unsigned threads = 0;
  bool json = false;
};

template <typename T>
T value_or_fail(Result<T> result) {
  if (!result.is_ok()) fail_usage(result.status().message());
  return std::move(result).value();
}

void run_compare(const CompareArgs& args) {
  if (args.atol.has_value() != args.rtol.has_value()) fail_usage("--atol and --rtol must be given together");

  NamedArrays candidate = value_or_fail(read_named_arrays(args.candidate));
  NamedArrays reference = value_or_fail(read_named_arrays(args.reference));
  // Two single arrays are the same output whatever their names (e.g. two .npy files).
  if (candidate.size() == 1 && reference.size() == 1 && candidate.begin()->first != reference.begin()->first) {
    auto node = candidate.extract(candidate.begin());
    node.key() = reference.begin()->first;
    candidate.insert(std::move(node));
  }

  Limits limits = args.limits_path.empty() ? Limits{} : value_or_fail(read_limits_file(args.limits_path));
  if (args.atol) {
    // The command line's tolerance applies to every output, over any in the limits file.
    const Tolerance tolerance{*args.atol, *args.rtol};
    limits.defaults.tolerance = tolerance;
    for (auto& entry : limits.outputs) entry.second.tolerance = tolerance;
  }
  CompareOptions base;
  base.metrics = args.metrics;
  base.threads = args.threads;
  const CompareOptions options = compare_options_for(limits, base);

  const ComparisonReport report = value_or_fail(compare_outputs(views_of(candidate), views_of(reference), options));
  const GateResult gate = value_or_fail(evaluate_gate(report, limits));
  const std::string text = args.json ? comparison_json(report, gate) + "\n" : comparison_table(report, gate);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  throw CommandExit{gate.passed ? kExitOk : kExitCheckFailed};
}

void add_compare_command(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Compare output arrays with references: NaN/inf counts, max abs error, relative L2 error, cosine "
      "similarity, elements outside atol + rtol*|ref|; exit 0 when the gate passes, 1 when it fails, 2 on "
      "bad input. Outputs are matched by name; two single arrays are matched whatever their names.");
  cmd->add_option("CANDIDATE", args->candidate, "Candidate outputs (.npy, .npz or .safetensors)")->required();
  cmd->add_option("REFERENCE", args->reference, "Reference outputs (.npy, .npz or .safetensors)")->required();
  cmd->add_option("--atol", args->atol, "Absolute tolerance (with --rtol; overrides the limits file)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--rtol", args->rtol, "Relative tolerance (with --atol; overrides the limits file)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--limits", args->limits_path, "Limits file (JSON; see docs/compare.md)")->check(CLI::ExistingFile);
  cmd->add_option("--metric", args->metrics, "Also compute an extra metric (psnr, snr, mse); repeatable");
  cmd->add_option("--threads", args->threads, "Worker threads (default: one per hardware thread)");
  cmd->add_flag("--json", args->json, "Print one JSON object instead of the table");
  cmd->callback([args] { run_compare(*args); });
}

const CommandRegistration kCompare{"compare", 40, &add_compare_command};

}  // namespace
}  // namespace tensoracle::cli
