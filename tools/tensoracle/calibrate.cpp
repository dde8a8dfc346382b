// tensoracle calibrate (--package LIB [--graph G] [--weights W] | --onnx MODEL) --inputs FILE...
//                      --output SCALES.safetensors [--method M] [--percentile P] [--num-bins N]
//                      [--tensor NAME[=SCALE]]... [--format F] [--weight-axis A | --per-tensor-weights]
//                      [--backend B] [--quiet] [--json]
//
// Runs representative inputs through the fp32 form of a graph and writes the scales of the tensors
// its quantize layers (or --tensor) name (include/tensoracle/calibrate.h, docs/quantization.md).
// Exit status: 0 written, 2 bad usage or an unreadable / unsuitable file.
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "build_options.h"
#include "tensoracle/calibrate.h"
#include "tensoracle/output_files.h"

namespace tensoracle::cli {
namespace {

struct CalibrateArgs {
  BuildOptions source;  // only its package, graph, weights and onnx are used
  std::vector<std::string> inputs;
  std::string output;
  std::string method = "max";
  double percentile = 99.99;
  int64_t num_bins = 2048;
  std::vector<std::string> tensors;
  std::string format = "int8";
  int64_t weight_axis = 0;
  bool per_tensor_weights = false;
  bool quiet = false;
  bool json = false;
};

// --tensor NAME or NAME=SCALE; a constant (weight) is per-channel along --weight-axis unless
// --per-tensor-weights.
std::vector<CalibrationTarget> targets_from_flags(const CalibrateArgs& args, const Network& network) {
  const DataType format = value_or_fail(parse_data_type(args.format));
  if (format != DataType::kInt8 && format != DataType::kFloat8E4M3)
    fail_usage(fmt::format("--format {}: must be int8 or fp8e4m3", args.format));
  std::vector<CalibrationTarget> targets;
  for (const std::string& flag : args.tensors) {
    CalibrationTarget target;
    const size_t equals = flag.find('=');
    target.tensor = flag.substr(0, equals);
    target.scale_name = equals == std::string::npos ? target.tensor + ".scale" : flag.substr(equals + 1);
    if (target.tensor.empty() || target.scale_name.empty())
      fail_usage(fmt::format("--tensor '{}': expected NAME or NAME=SCALE", flag));
    target.format = format;
    const Tensor t = value_or_fail(network.find_tensor(target.tensor));
    const TensorInfo& info = network.tensor(t);
    const bool constant = info.producer >= 0 && network.node(static_cast<size_t>(info.producer)).kind == OpKind::kConstant;
    if (constant && !args.per_tensor_weights) target.axis = args.weight_axis;
    targets.push_back(std::move(target));
  }
  return targets;
}

std::string text_summary(const Calibration& calibration, const std::string& output) {
  std::string text = fmt::format("{:<40} {:<10} {:<8} {:>12} {:>14}\n", "scale", "kind", "format", "threshold", "scale");
  for (const CalibratedScale& s : calibration.scales) {
    const bool per_channel = s.scale.shape().rank() == 1;
    const std::string value = per_channel ? fmt::format("[{}]", s.scale.shape()[0])
                                          : fmt::format("{:.6g}", *s.scale.data_as<float>());
    text += fmt::format("{:<40} {:<10} {:<8} {:>12.6g} {:>14}\n", s.target.scale_name,
                        per_channel ? "weight/ch" : (s.target.axis ? "weight" : "tensor"),
                        data_type_name(s.target.format), s.threshold, value);
  }
  return text + fmt::format("wrote {} scales to {}\n", calibration.scales.size(), output);
}

std::string json_summary(const Calibration& calibration, const std::string& output) {
  nlohmann::json scales = nlohmann::json::array();
  for (const CalibratedScale& s : calibration.scales) {
    std::vector<float> values(s.scale.data_as<float>(), s.scale.data_as<float>() + s.scale.element_count());
    nlohmann::json entry = {{"scale", s.target.scale_name}, {"tensor", s.target.tensor},
                            {"format", data_type_name(s.target.format)}, {"threshold", s.threshold},
                            {"min", s.min}, {"max", s.max}, {"values", values}};
    if (s.target.axis) entry["axis"] = *s.target.axis;
    scales.push_back(std::move(entry));
  }
  nlohmann::json metadata(calibration.metadata);
  return nlohmann::json{{"ok", true}, {"output", output}, {"metadata", metadata}, {"scales", scales}}.dump(2) + "\n";
}

void run_calibrate(const CalibrateArgs& args) {
  if (!args.source.has_source()) fail_usage("give one of --package and --onnx");
  std::vector<std::string> read = args.inputs;
  for (const std::string& file : {args.source.package, args.source.onnx, args.source.weights})
    if (!file.empty()) read.push_back(file);
  if (const Status writable = check_output_path(args.output, read); !writable.is_ok()) fail_usage(writable.message());
  if (args.output.size() < 12 || args.output.compare(args.output.size() - 12, 12, ".safetensors") != 0)
    fail_usage(fmt::format("--output '{}': the scales are written as safetensors (a name ending in .safetensors)",
                           args.output));

  CalibrationSettings settings;
  settings.method = value_or_fail(parse_calibration_method(args.method));
  settings.percentile = args.percentile;
  settings.num_bins = args.num_bins;
  settings.backend = args.source.backend;
  if (!args.quiet) settings.progress = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };

  // The graph, defined with a placeholder for every weight the file lacks (its scales, before
  // they exist); any other missing weight is refused below.
  const EngineBuild build = args.source.engine_build();
  Weights base = build.weights ? *build.weights
                               : (build.weights_path.empty() ? Weights::none() : value_or_fail(Weights::open(build.weights_path)));
  const Weights weights = Weights::with_unit_placeholders(base);
  Network network;
  if (const Status defined = build.graph(network, weights); !defined.is_ok()) {
    // A placeholder where a real weight was missing fails later and less clearly (a shape):
    // the definition with the weights alone names the first weight missing.
    Network plain;
    const Status without = weights.placeholder_names().empty() ? defined : build.graph(plain, base);
    fail_usage(fmt::format("graph '{}': {}", build.name, without.is_ok() ? defined.message() : without.message()));
  }
  if (const Status missing = check_placeholders_are_scales(network, weights.placeholder_names()); !missing.is_ok())
    fail_usage(fmt::format("graph '{}': {}", build.name, missing.message()));

  const std::vector<CalibrationTarget> targets =
      args.tensors.empty() ? value_or_fail(quantization_targets(network)) : targets_from_flags(args, network);
  std::vector<CalibrationTarget> chosen = targets;
  if (args.tensors.empty())
    for (CalibrationTarget& t : chosen)
      if (t.axis && args.per_tensor_weights) t.axis.reset();
  const Calibration calibration = value_or_fail(calibrate(network, weights, chosen, args.inputs, settings));
  if (const Status written = write_calibration(args.output, calibration); !written.is_ok()) fail_usage(written.message());
  print_result(args.json ? json_summary(calibration, args.output) : text_summary(calibration, args.output));
  throw CommandExit{kExitOk};
}

void add_calibrate_command(CLI::App& app) {
  auto args = std::make_shared<CalibrateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "Compute the scales of a quantized graph: run representative inputs through its fp32 form (every Q -> DQ pair "
      "taken out) and write one scale per quantized activation and one per channel of each quantized weight, by max, "
      "percentile, entropy (KL) or MSE, as safetensors with the method and the inputs' hashes in its metadata "
      "(docs/quantization.md).");
  auto* package_opt = cmd->add_option("--package", args->source.package,
                                      "Model package whose graph has quantize/dequantize layers (a shared library, "
                                      "loaded with dlopen: load only packages you trust)");
  cmd->add_option("--graph", args->source.graph, "Graph of the package (default: its first)")->needs(package_opt);
  cmd->add_option("--weights", args->source.weights,
                  "Weights (.safetensors or .index.json; default: the package's). Scales the graph reads and the "
                  "weights lack are placeholders while calibrating; any other missing weight is an error")
      ->needs(package_opt);
  cmd->add_option("--onnx", args->source.onnx, "ONNX model instead of a package graph (name its tensors with --tensor)")
      ->excludes(package_opt);
  cmd->add_option("--inputs", args->inputs,
                  "Representative inputs: one batch per file (.npz, .safetensors, .npy for a one-input graph), every "
                  "graph input by name; shapes may differ between files")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--output", args->output, "Where to write the scales (.safetensors; never one of the inputs)")->required();
  cmd->add_option("--method", args->method,
                  "How an activation's threshold T is chosen (scale = T / 127 for int8, T / 448 for fp8):\n"
                  "  max        the largest |x| over every input\n"
                  "  percentile the --percentile point of |x| (histogram of --num-bins bins)\n"
                  "  entropy    TensorRT's KL-divergence search over the histogram (--num-bins >= 128)\n"
                  "  mse        the least squared quantization error over the histogram\n"
                  "Weights are always per channel by max.")
      ->check(CLI::IsMember({"max", "percentile", "entropy", "mse"}));
  cmd->add_option("--percentile", args->percentile, "percentile: the share of |x| kept, in percent (default 99.99)")
      ->check(CLI::Range(0.0, 100.0));
  cmd->add_option("--num-bins", args->num_bins, "Bins of the |x| histogram over [0, amax] (default 2048)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd->add_option("--tensor", args->tensors,
                  "A tensor to calibrate instead of the graph's quantize layers' inputs: NAME (scale written as "
                  "NAME.scale) or NAME=SCALE; repeatable. A constant (weight) gets one scale per channel")
      ->allow_extra_args(false);
  cmd->add_option("--format", args->format, "With --tensor: int8 (qmax 127) or fp8e4m3 (qmax 448); a graph's quantize "
                                            "layers say their own")
      ->check(CLI::IsMember({"int8", "fp8e4m3"}));
  cmd->add_option("--weight-axis", args->weight_axis, "With --tensor: the channel axis of weights (default 0)");
  cmd->add_flag("--per-tensor-weights", args->per_tensor_weights, "One scale per weight tensor, not per channel");
  cmd->add_option("--backend", args->source.backend, BuildOptions::backend_help())
      ->check(CLI::IsMember(backends::backend_names()));
  cmd->add_flag("--quiet", args->quiet, "No progress on stderr");
  cmd->add_flag("--json", args->json, "Print one JSON object: the metadata and every scale's values");
  cmd->callback([args] { run_calibrate(*args); });
}

const CommandRegistration kCalibrate{"calibrate", 42, &add_calibrate_command};

}  // namespace
}  // namespace tensoracle::cli
