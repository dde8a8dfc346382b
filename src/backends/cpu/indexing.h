// Index arithmetic shared by CPU kernels: strides, broadcasting, axis splits.
#pragma once

#include <cstdint>
#include <vector>

#include "tensoracle/types.h"

namespace tensoracle::backends::cpu {

// Row-major strides of a static shape.
inline std::vector<int64_t> strides_of(const Dims& shape) {
  std::vector<int64_t> s(shape.rank(), 1);
  for (size_t i = shape.rank(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

inline int64_t count_of(const Dims& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// Strides of `in` read at the coordinates of `out` under numpy broadcasting (rank of `out`;
// 0 where `in` has size 1 or no such dim).
inline std::vector<int64_t> broadcast_strides(const Dims& in, const Dims& out) {
  std::vector<int64_t> s(out.rank(), 0);
  const std::vector<int64_t> own = strides_of(in);
  const size_t offset = out.rank() - in.rank();
  for (size_t i = 0; i < in.rank(); ++i) s[offset + i] = in[i] == 1 ? 0 : own[i];
  return s;
}

// Walks the elements of `out` in order, tracking the matching offset in up to 3 broadcast
// inputs. Start with seek(flat index), then next() for each following element.
class BroadcastCursor {
 public:
  BroadcastCursor(const Dims& out, std::vector<std::vector<int64_t>> strides)
      : dims_(out.values()), strides_(std::move(strides)), coord_(dims_.size(), 0), offset_(strides_.size(), 0) {}

  void seek(int64_t flat) {
    for (size_t i = dims_.size(); i-- > 0;) {
      coord_[i] = dims_[i] ? flat % dims_[i] : 0;
      flat = dims_[i] ? flat / dims_[i] : 0;
    }
    for (size_t k = 0; k < strides_.size(); ++k) {
      offset_[k] = 0;
      for (size_t i = 0; i < dims_.size(); ++i) offset_[k] += coord_[i] * strides_[k][i];
    }
  }
  int64_t offset(size_t k) const { return offset_[k]; }
  void next() {
    for (size_t i = dims_.size(); i-- > 0;) {
      for (size_t k = 0; k < strides_.size(); ++k) offset_[k] += strides_[k][i];
      if (++coord_[i] < dims_[i]) return;
      for (size_t k = 0; k < strides_.size(); ++k) offset_[k] -= strides_[k][i] * dims_[i];
      coord_[i] = 0;
    }
  }

 private:
  std::vector<int64_t> dims_;
  std::vector<std::vector<int64_t>> strides_;
  std::vector<int64_t> coord_;
  std::vector<int64_t> offset_;
};

// A shape split around `axis`: outer * size * inner elements.
struct AxisSplit {
  int64_t outer = 1, size = 1, inner = 1;
};
inline AxisSplit split_at(const Dims& shape, int64_t axis) {
  AxisSplit s;
  for (int64_t i = 0; i < static_cast<int64_t>(shape.rank()); ++i) {
    if (i < axis) s.outer *= shape[i];
    else if (i == axis) s.size = shape[i];
    else s.inner *= shape[i];
  }
  return s;
}

}  // namespace tensoracle::backends::cpu
