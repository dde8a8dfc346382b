#include "backends/cuda/device_tensor.h"

#include "core/errors.h"

namespace tensoracle::backends::cuda {

const char* layout_name(Layout layout) {
  switch (layout) {
    case Layout::kNhwc: return "nhwc";
    case Layout::kBshd: return "bshd";
    case Layout::kLinear: break;
  }
  return "linear";
}

std::vector<TensorFormat> formats_of_layout(Layout layout, const TensorDesc& desc) {
  switch (layout) {
    case Layout::kLinear: return {TensorFormat::kLinear};
    case Layout::kNhwc: {
      if (desc.shape.rank() != 4) return {};
      std::vector<TensorFormat> out{TensorFormat::kHwc};
      if (check_format_applies({desc.dtype, TensorFormat::kHwc8}, desc.shape).is_ok() && desc.shape[1] % 8 == 0)
        out.push_back(TensorFormat::kHwc8);
      return out;
    }
    case Layout::kBshd: break;
  }
  return {};
}

std::vector<int64_t> element_strides(const Dims& shape, Layout layout) {
  const size_t rank = shape.rank();
  std::vector<int64_t> strides(rank, 1);
  if (layout == Layout::kNhwc && rank == 4) {
    auto hwc = format_strides(TensorFormat::kHwc, shape);
    if (hwc.is_ok()) return *std::move(hwc);
  }
  if (layout == Layout::kBshd && rank == 4) {
    const int64_t h = shape[1], s = shape[2], d = shape[3];
    strides = {s * h * d, d, h * d, 1};
    return strides;
  }
  for (size_t d = rank; d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

Result<TensorGeometry> geometry_of(const DeviceTensor& t) { return broadcast_geometry(t, t.shape); }

Result<TensorGeometry> broadcast_geometry(const DeviceTensor& t, const Dims& shape) {
  if (shape.rank() > static_cast<size_t>(TensorGeometry::kMaxRank))
    return unsupported("tensor of rank {} (shape {}): CUDA kernels take at most rank {}", shape.rank(), shape.to_string(),
                       TensorGeometry::kMaxRank);
  if (t.shape.rank() > shape.rank())
    return invalid_argument("shape {} does not broadcast to {}", t.shape.to_string(), shape.to_string());
  if (t.layout != Layout::kLinear && t.shape.rank() != 4)
    return invalid_argument("a {} tensor must have rank 4, got shape {}", layout_name(t.layout), t.shape.to_string());
  const std::vector<int64_t> own = element_strides(t.shape, t.layout);
  TensorGeometry g;
  g.rank = static_cast<int>(shape.rank());
  const size_t lead = shape.rank() - t.shape.rank();
  for (size_t d = 0; d < shape.rank(); ++d) {
    g.shape[d] = shape[d];
    if (d < lead) continue;  // added leading dim: stride 0
    const int64_t own_dim = t.shape[d - lead];
    if (own_dim == shape[d]) g.stride[d] = own_dim == 1 ? 0 : own[d - lead];
    else if (own_dim == 1) g.stride[d] = 0;
    else return invalid_argument("shape {} does not broadcast to {} (dim {})", t.shape.to_string(), shape.to_string(), d);
  }
  return g;
}

}  // namespace tensoracle::backends::cuda
