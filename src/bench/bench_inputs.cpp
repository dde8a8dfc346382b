// Inputs for timing (bench.h): fixed arrays brought to another batch, or seeded synthetic ones.
#include <cstring>
#include <random>

#include "core/errors.h"
#include "tensoracle/bench.h"
#include "tensoracle/float_formats.h"

namespace tensoracle {

Result<NamedArrays> arrays_at_batch(const NamedArrayViews& inputs, int64_t batch) {
  if (batch < 1) return invalid_argument("batch {} (must be >= 1)", batch);
  NamedArrays out;
  for (const auto& [name, view] : inputs) {
    if (view.shape.rank() == 0 || view.shape[0] < 1)
      return invalid_argument("array '{}' of shape {} has no batch dim to repeat", name, view.shape.to_string());
    std::vector<int64_t> dims = view.shape.values();
    const int64_t rows = dims[0];
    dims[0] = batch;
    TO_ASSIGN_OR_RETURN(HostArray array, HostArray::zeros(view.dtype, Dims(dims)));
    const size_t row_bytes = view.byte_size() / static_cast<size_t>(rows);
    for (int64_t r = 0; r < batch; ++r)
      std::memcpy(static_cast<char*>(array.data()) + static_cast<size_t>(r) * row_bytes,
                  static_cast<const char*>(view.data) + static_cast<size_t>(r % rows) * row_bytes, row_bytes);
    out.emplace(name, std::move(array));
  }
  return out;
}

Result<NamedArrays> synthetic_inputs(const Engine& engine, size_t profile, int64_t batch) {
  if (profile >= engine.num_profiles())
    return invalid_argument("optimization profile {} (the engine has {})", profile, engine.num_profiles());
  std::mt19937_64 rng(20261203);
  NamedArrays out;
  for (const std::string& name : engine.input_names()) {
    TO_ASSIGN_OR_RETURN(IoTensor io, engine.tensor(name));
    std::vector<int64_t> dims = io.profiles[profile].opt.values();
    if (batch > 0 && !dims.empty()) dims[0] = batch;
    TO_ASSIGN_OR_RETURN(HostArray array, HostArray::zeros(io.dtype, Dims(dims)));
    if (is_floating_point(io.dtype)) {
      // Uniform in [-1, 1), rounded to the input's type.
      TO_ASSIGN_OR_RETURN(HostArray values, HostArray::zeros(DataType::kFloat32, Dims(dims)));
      float* v = values.data_as<float>();
      for (int64_t i = 0; i < values.element_count(); ++i)
        v[i] = static_cast<float>(static_cast<double>(rng() >> 11) * 0x1.0p-53 * 2.0 - 1.0);
      convert_elements(DataType::kFloat32, values.data(), io.dtype, array.data(), static_cast<size_t>(array.element_count()));
    }
    out.emplace(name, std::move(array));
  }
  return out;
}

}  // namespace tensoracle
