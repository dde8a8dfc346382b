// tensoracle compare CANDIDATE REFERENCE [--atol A --rtol R] [--limits FILE] [--metric NAME]
//                    [--only NAMES] [--exclude NAMES] [--max-input-size SIZE] [--json]
//
// Compares named output arrays (.npy, .npz, .safetensors) and gates them against limits.
// Exit status: 0 passed, 1 the gate failed, 2 bad usage or unreadable input.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "command.h"
#include "tensoracle/byte_size.h"
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
  std::vector<std::string> only;
  std::vector<std::string> exclude;
  std::string max_input_size;
  unsigned threads = 0;
  bool json = false;
};


// The arrays to read from each file: the selection, and the byte limit (a deflated .npz can
// declare far more than its size).
ArrayReadOptions read_options(const CompareArgs& args) {
  ArrayReadOptions options;
  if (!args.only.empty()) options.only = std::set<std::string>(args.only.begin(), args.only.end());
  options.exclude = std::set<std::string>(args.exclude.begin(), args.exclude.end());
  if (options.only)
    for (const std::string& name : options.exclude)
      if (options.only->count(name) != 0) fail_usage("'" + name + "' is given to both --only and --exclude");
  if (!args.max_input_size.empty()) {
    auto limit = parse_byte_size(args.max_input_size);
    if (!limit.is_ok()) fail_usage("--max-input-size: " + limit.status().message());
    options.max_total_bytes = *limit;
  }
  return options;
}

void run_compare(const CompareArgs& args) {
  if (args.atol.has_value() != args.rtol.has_value()) fail_usage("--atol and --rtol must be given together");

  const ArrayReadOptions options = read_options(args);
  NamedArrays candidate = value_or_fail(read_named_arrays(args.candidate, options));
  NamedArrays reference = value_or_fail(read_named_arrays(args.reference, options));
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
  // Limits for outputs the selection left out do not apply.
  for (auto it = limits.outputs.begin(); it != limits.outputs.end();) {
    const bool selected = (!options.only || options.only->count(it->first) != 0) && options.exclude.count(it->first) == 0;
    it = selected ? std::next(it) : limits.outputs.erase(it);
  }
  CompareOptions base;
  base.metrics = args.metrics;
  base.threads = args.threads;
  const CompareOptions compare_options = compare_options_for(limits, base);

  const ComparisonReport report = value_or_fail(compare_outputs(views_of(candidate), views_of(reference), compare_options));
  const GateResult gate = value_or_fail(evaluate_gate(report, limits));
  const std::string text = args.json ? comparison_json(report, gate) + "\n" : comparison_table(report, gate);
  print_result(text);
  throw CommandExit{gate.passed ? kExitOk : kExitCheckFailed};
}

// A tolerance: a finite number >= 0, spelled the way the user wrote it in any error.
CLI::Validator tolerance_validator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0') return "'" + text + "' is not a number";
        if (!std::isfinite(value)) return "'" + text + "' is not finite (a tolerance is a finite number >= 0)";
        if (value < 0) return "'" + text + "' is negative (a tolerance is a finite number >= 0)";
        return std::string();
      },
      "TOLERANCE");
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
      ->check(tolerance_validator());
  cmd->add_option("--rtol", args->rtol, "Relative tolerance (with --atol; overrides the limits file)")
      ->check(tolerance_validator());
  cmd->add_option("--limits", args->limits_path, "Limits file (JSON; see docs/compare.md)")->check(CLI::ExistingFile);
  cmd->add_option("--metric", args->metrics, "Also compute an extra metric (psnr, snr, mse); repeatable");
  cmd->add_option("--only", args->only,
                  "Compare only these arrays (names; repeatable or comma-separated), e.g. the outputs in a fixture "
                  "that also holds the inputs; each must be in both files")
      ->delimiter(',');
  cmd->add_option("--exclude", args->exclude, "Leave these arrays out (names; repeatable or comma-separated)")
      ->delimiter(',');
  cmd->add_option("--max-input-size", args->max_input_size,
                  "Most array data to read from each file, e.g. 8G, checked before anything is decompressed "
                  "(default: the larger of 1G and 8x the file's size)");
  cmd->add_option("--threads", args->threads, "Worker threads (default: one per hardware thread)");
  cmd->add_flag("--json", args->json, "Print one JSON object instead of the table");
  cmd->callback([args] { run_compare(*args); });
}

const CommandRegistration kCompare{"compare", 40, &add_compare_command};

}  // namespace
}  // namespace tensoracle::cli
