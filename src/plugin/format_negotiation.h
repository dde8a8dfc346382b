// Format negotiation: which type/format (TypeFormat) each input of a plugin layer gets, shared by
// every backend. A backend describes each input by what its producer already wrote (the formats
// those bytes already are: fp16 channels-last with C % 8 == 0 is both fp16/HWC and fp16/HWC8);
// negotiate_plugin_inputs asks the plugin, input by input, with the choices made before
// (Plugin::supports), and takes among the combinations the plugin declares for the input
//   1. one the producer already provides: no conversion;
//   2. the producer's type in another format: a reformat;
//   3. another floating type (fp32, fp16, bf16) in a format it provides, then in another format:
//      a cast, then a cast and a reformat;
// in declaration order within each rank. Types convert only among fp32, fp16 and bf16 (the same
// rule on every backend, so that the cpu reference and the cuda engine run a plugin in the same
// types); formats only where they apply (check_format_applies: HWC/HWC8 need rank 4, HWC8 fp16
// or bf16). An input no declared combination can serve refuses the layer, naming the plugin, the
// input and each combination with why it was passed over.
//
// The backend then converts what the producer wrote into the chosen combination before running
// the plugin, and converts each output the plugin writes in another layout than its consumers
// read back (an output's type is the declared one: the graph's tensor has that type).
#pragma once

#include <string>
#include <vector>

#include "tensoracle/plugin_runtime.h"

namespace tensoracle::plugin {

// What the producer of one plugin input wrote.
struct ProvidedInput {
  DataType type = DataType::kFloat32;  // the tensor's type
  Dims shape;                          // logical dims (-1 allowed at definition time)
  // The formats the bytes already are, in the tensor's type; LINEAR when empty.
  std::vector<TensorFormat> formats;
};

// Whether a value of type `from` may be converted to `to` for a plugin: equal, or both among
// fp32, fp16 and bf16.
bool plugin_type_converts(DataType from, DataType to);

// The chosen combination of each input, in input order. `who` is the plugin's display name;
// `io` its declaration's PluginIO (io.inputs.size() == provided.size()).
Result<std::vector<TypeFormat>> negotiate_plugin_inputs(const Plugin& plugin, const std::string& who, const PluginIO& io,
                                                        const std::vector<ProvidedInput>& provided);

// Whether `chosen` needs no conversion from `provided`.
bool provided_as_is(const ProvidedInput& provided, const TypeFormat& chosen);

// "input 0: fp16/HWC8, input 1: fp32/LINEAR"-style list: "fp16/HWC8, fp32/LINEAR".
std::string type_format_list(const std::vector<TypeFormat>& formats);

}  // namespace tensoracle::plugin
