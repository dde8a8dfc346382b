// A tensor in device memory as tactics see it: logical type and shape (the network's, e.g.
// NCHW order for images), its memory layout and the address.
//
// Layouts: kLinear is row-major over the logical dims (the network's default; every engine input
// and output is linear): TensorFormat::kLinear. kNhwc is a rank-4 tensor whose logical dims are
// [N, C, H, W] stored channels-last (physical order N, H, W, C), which tensor-core convolutions
// prefer in fp16/bf16: TensorFormat::kHwc, and kHwc8 too where C needs no padding
// (formats_of_layout is the one place that says so).
// kBshd is a rank-4 tensor whose logical dims are [B, H, S, D] stored as [B, S, H, D]: the bytes
// of a linear [B, S, H*D] projection split into heads, which attention reads and writes in place
// of the graph's transposes around it.
// The builder chooses layouts and inserts reformat steps where a tactic needs another one.
#pragma once

#include <cstdint>
#include <vector>

#include "tensoracle/network.h"
#include "tensoracle/tensor_format.h"

namespace tensoracle::backends::cuda {

enum class Layout : uint8_t { kLinear, kNhwc, kBshd };

const char* layout_name(Layout layout);  // "linear", "nhwc", "bshd"

// The public formats (tensor_format.h) that a tensor described by `desc` and stored in `layout`
// already is, in its own type: linear is LINEAR; nhwc is HWC, and also HWC8 for fp16/bf16 with C a
// multiple of 8 (the padding is empty); bshd is none. What a plugin may read or write in place
// (format_negotiation.h).
std::vector<TensorFormat> formats_of_layout(Layout layout, const TensorDesc& desc);

// Element strides of each logical dim for `shape` stored in `layout` (kNhwc and kBshd need rank 4).
std::vector<int64_t> element_strides(const Dims& shape, Layout layout);

struct DeviceTensor {
  DataType dtype = DataType::kFloat32;
  Dims shape;
  Layout layout = Layout::kLinear;
  void* data = nullptr;  // nullptr: an omitted optional input

  int64_t element_count() const {
    auto n = shape.element_count();
    return n.is_ok() ? *n : 0;
  }
  size_t byte_size() const { return static_cast<size_t>(element_count()) * data_type_size(dtype); }
};

// Shape and element strides by value, small enough to pass to a kernel as an argument; kernels
// walk any layout (and broadcasts, with stride 0) through it.
struct TensorGeometry {
  static constexpr int kMaxRank = 8;
  int rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t stride[kMaxRank] = {};
};

// The geometry of `t` (rank <= kMaxRank, else kUnsupported naming the rank).
Result<TensorGeometry> geometry_of(const DeviceTensor& t);
// The geometry of `t` read as if broadcast to `shape` (numpy rules: leading dims added, size-1
// dims get stride 0). Fails when `t` does not broadcast to `shape`.
Result<TensorGeometry> broadcast_geometry(const DeviceTensor& t, const Dims& shape);

}  // namespace tensoracle::backends::cuda
