// Plugin tensors on the host in their negotiated formats (plugin_storage.h).
#include "backends/cpu/plugin_storage.h"

#include <vector>

#include "core/errors.h"
#include "tensoracle/float_formats.h"

namespace tensoracle::backends::cpu {

namespace {

// Storage offset of every element, in linear (logical) order.
Result<std::vector<int64_t>> storage_offsets(const Dims& shape, TensorFormat format) {
  TO_ASSIGN_OR_RETURN(const std::vector<int64_t> strides, format_strides(format, shape));
  TO_ASSIGN_OR_RETURN(const int64_t count, shape.element_count());
  std::vector<int64_t> offsets(static_cast<size_t>(count));
  std::vector<int64_t> index(shape.rank(), 0);
  for (int64_t e = 0; e < count; ++e) {
    int64_t offset = 0;
    for (size_t d = 0; d < index.size(); ++d) offset += index[d] * strides[d];
    offsets[static_cast<size_t>(e)] = offset;
    for (size_t d = index.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return offsets;
}

}  // namespace

Result<HostArray> plugin_output_storage(const Dims& shape, const TypeFormat& format) {
  TO_RETURN_IF_ERROR(check_format_applies(format, shape));
  TO_ASSIGN_OR_RETURN(const int64_t storage, format_storage_elements(format.format, shape));
  return HostArray::zeros(format.type, Dims{storage});
}

Result<HostArray> to_plugin_storage(const double* values, const Dims& shape, const TypeFormat& target) {
  TO_ASSIGN_OR_RETURN(HostArray out, plugin_output_storage(shape, target));
  const size_t storage = static_cast<size_t>(out.element_count());
  if (target.format == TensorFormat::kLinear) {
    convert_elements(DataType::kFloat64, values, target.type, out.data(), storage);
    return out;
  }
  TO_ASSIGN_OR_RETURN(const std::vector<int64_t> offsets, storage_offsets(shape, target.format));
  std::vector<double> placed(storage, 0.0);
  for (size_t e = 0; e < offsets.size(); ++e) placed[static_cast<size_t>(offsets[e])] = values[e];
  convert_elements(DataType::kFloat64, placed.data(), target.type, out.data(), storage);
  return out;
}

Status from_plugin_storage(const HostArray& storage, const Dims& shape, TensorFormat format, double* values) {
  const size_t count = static_cast<size_t>(storage.element_count());
  TO_ASSIGN_OR_RETURN(const int64_t expected, format_storage_elements(format, shape));
  TO_ASSERT(expected == storage.element_count());
  if (format == TensorFormat::kLinear) {
    convert_elements(storage.dtype(), storage.data(), DataType::kFloat64, values, count);
    return Status::ok();
  }
  std::vector<double> all(count);
  convert_elements(storage.dtype(), storage.data(), DataType::kFloat64, all.data(), count);
  TO_ASSIGN_OR_RETURN(const std::vector<int64_t> offsets, storage_offsets(shape, format));
  for (size_t e = 0; e < offsets.size(); ++e) values[e] = all[static_cast<size_t>(offsets[e])];
  return Status::ok();
}

}  // namespace tensoracle::backends::cpu
