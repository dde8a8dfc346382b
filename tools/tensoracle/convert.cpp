// tensoracle convert IN.pth OUT.safetensors [--key state_dict] [--dtype keep|fp32|fp16|bf16]
//                    [--max-output-size SIZE] [-q]
#include <cstdio>
#include <memory>

#include "command.h"
#include "core/counted.h"
#include "progress_line.h"
#include "tensoracle/byte_size.h"
#include "tensoracle/output_files.h"
#include "tensoracle/pth.h"

namespace tensoracle::cli {
namespace {

struct ConvertArgs {
  std::string input;
  std::string output;
  std::string key;
  std::string dtype = "keep";
  std::string max_output_size;
  bool quiet = false;
};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void run_convert(const ConvertArgs& args) {
  // The converter writes safetensors only: another extension would name a file of another format.
  if (!ends_with(args.output, ".safetensors"))
    fail_usage("cannot write '" + args.output + "': convert writes safetensors; name the output *.safetensors");
  if (const Status writable = check_output_path(args.output, {args.input}); !writable.is_ok())
    fail_usage(writable.message());
  PthOptions options;
  options.key = args.key;
  if (args.dtype != "keep") {
    auto dtype = parse_data_type(args.dtype);
    if (!dtype.is_ok()) fail_usage(dtype.status().message());
    options.float_dtype = *dtype;
  }
  if (!args.max_output_size.empty()) {
    auto limit = parse_byte_size(args.max_output_size);
    if (!limit.is_ok()) fail_usage("--max-output-size: " + limit.status().message());
    options.max_output_bytes = *limit;
  }
  ProgressLine progress("convert");
  if (!args.quiet)
    options.progress = [&](const PthProgress& p) { progress.report(p.stage, p.done_bytes, p.total_bytes); };
  auto conversion = convert_pth_to_safetensors(args.input, args.output, options);
  if (!conversion.is_ok()) fail_usage(conversion.status().to_string());
  if (!args.quiet)
    for (const std::string& note : conversion->notes) std::printf("note: %s\n", note.c_str());
  std::printf("wrote %s to %s (source sha256 %s)\n", counted(conversion->tensor_count, "tensor").c_str(),
              args.output.c_str(), conversion->source_sha256.c_str());
}

void add_convert_command(CLI::App& app) {
  auto args = std::make_shared<ConvertArgs>();
  CLI::App* command = app.add_subcommand(
      "convert",
      "Convert a PyTorch checkpoint (.pth/.pt from torch.save) to safetensors, without Python. The pickle is "
      "interpreted as data only: anything but tensors and state-dict containers is refused.");
  command->add_option("input", args->input, "checkpoint written by torch.save (zip format, torch >= 1.6)")
      ->required()
      ->check(CLI::ExistingFile);
  command->add_option("output", args->output,
                      "*.safetensors file to write (atomically: nothing on failure or interruption; only a new or "
                      "regular file is replaced, never the input)")
      ->required();
  command->add_option("--key", args->key,
                      "dotted path to the tensors inside the saved object, e.g. state_dict or model.state_dict "
                      "(default: every tensor, named by its path)");
  command->add_option("--dtype", args->dtype, "convert fp64/fp32/fp16/bf16 tensors to this type (default keep)")
      ->check(CLI::IsMember({"keep", "fp32", "fp16", "bf16"}));
  command->add_option("--max-output-size", args->max_output_size,
                      "refuse a checkpoint whose tensors expand to more than this (e.g. 64G), checked before anything "
                      "is written; views such as torch's expand() become dense copies (default: the larger of 16G "
                      "and 8x the checkpoint's size)");
  command->add_flag("-q,--quiet", args->quiet, "do not list the skipped non-tensor values or show progress");
  command->callback([args] { run_convert(*args); });
}

const CommandRegistration kConvert{"convert", 60, &add_convert_command};

}  // namespace
}  // namespace tensoracle::cli
