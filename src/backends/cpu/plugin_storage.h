// Host storage of a plugin layer's tensors in the type/format the plugin was given
// (format_negotiation.h): the reference backend holds every value as linear fp64, and converts it
// into the chosen type and layout before run_on_host and back afterwards. Converting to a type
// rounds as the cpu backend rounds every layer's output; HWC8's padding channels are zero.
#pragma once

#include "tensoracle/array.h"
#include "tensoracle/tensor_format.h"

namespace tensoracle::backends::cpu {

// The storage of `values` (linear, logical `shape`) as `target`: a 1-D array of the storage's
// element count (format_storage_elements) in target.type.
Result<HostArray> to_plugin_storage(const double* values, const Dims& shape, const TypeFormat& target);

// A zero-filled storage of `shape` as `format` in `type`, for a plugin output.
Result<HostArray> plugin_output_storage(const Dims& shape, const TypeFormat& format);

// The linear fp64 values of `shape` from `storage` (made by either function above) laid out in
// `format`; padding is not read.
Status from_plugin_storage(const HostArray& storage, const Dims& shape, TensorFormat format, double* values);

}  // namespace tensoracle::backends::cpu
