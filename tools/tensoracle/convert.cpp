// tensoracle convert IN.pth OUT.safetensors [--key state_dict] [--dtype keep|fp32|fp16|bf16]
#include <cstdio>
#include <memory>

#include "command.h"
#include "tensoracle/pth.h"

namespace tensoracle::cli {
namespace {

struct ConvertArgs {
  std::string input;
  std::string output;
  std::string key;
  std::string dtype = "keep";
  bool quiet = false;
};

void run_convert(const ConvertArgs& args) {
  PthOptions options;
  options.key = args.key;
  if (args.dtype != "keep") {
    auto dtype = parse_data_type(args.dtype);
    if (!dtype.is_ok()) fail_usage(dtype.status().message());
    options.float_dtype = *dtype;
  }
  auto conversion = convert_pth_to_safetensors(args.input, args.output, options);
  if (!conversion.is_ok()) fail_usage(conversion.status().to_string());
  if (!args.quiet)
    for (const std::string& note : conversion->notes) std::printf("note: %s\n", note.c_str());
  std::printf("wrote %zu tensors to %s (source sha256 %s)\n", conversion->tensor_count, args.output.c_str(),
              conversion->source_sha256.c_str());
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
  command->add_option("output", args->output, "safetensors file to write (atomically; nothing on failure)")
      ->required();
  command->add_option("--key", args->key,
                      "dotted path to the tensors inside the saved object, e.g. state_dict or model.state_dict "
                      "(default: every tensor, named by its path)");
  command->add_option("--dtype", args->dtype, "convert fp64/fp32/fp16/bf16 tensors to this type (default keep)")
      ->check(CLI::IsMember({"keep", "fp32", "fp16", "bf16"}));
  command->add_flag("-q,--quiet", args->quiet, "do not list the skipped non-tensor values");
  command->callback([args] { run_convert(*args); });
}

const CommandRegistration kConvert{"convert", 60, &add_convert_command};

}  // namespace
}  // namespace tensoracle::cli
