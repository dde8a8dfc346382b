// Data movement: reshape, transpose, concat, slice, pad, gather, iota, select, cast.
#include <cmath>

#include "backends/cpu/indexing.h"
#include "backends/cpu/kernel.h"
#include "backends/cpu/parallel.h"

namespace tensoracle::backends::cpu {

namespace {
// out[i] = in[offset(i)] where the cursor walks `out_shape` with `strides` over the input.
void gather_strided(const Dims& out_shape, const std::vector<int64_t>& strides, const double* in, int64_t base,
                    double* out) {
  parallel_for(count_of(out_shape), 1 << 15, [&](int64_t begin, int64_t end) {
    BroadcastCursor c(out_shape, {strides});
    c.seek(begin);
    for (int64_t i = begin; i < end; ++i, c.next()) out[i] = in[base + c.offset(0)];
  });
}
}  // namespace

Status reshape_kernel(const KernelContext& k) {
  std::copy(k.in(0), k.in(0) + count_of(k.in_shape(0)), k.out(0));
  return Status::ok();
}

// Casting is the executor's rounding of the copied values to the output type (docs/ops.md).
Status cast_kernel(const KernelContext& k) { return reshape_kernel(k); }

Status transpose_kernel(const KernelContext& k) {
  TO_ASSIGN_OR_RETURN(const TransposeAttributes* a, k.attributes<TransposeAttributes>());
  const std::vector<int64_t>& perm = a->perm;
  const auto in_strides = strides_of(k.in_shape(0));
  std::vector<int64_t> strides;
  for (int64_t p : perm) strides.push_back(in_strides[p]);
  gather_strided(k.out_shape(0), strides, k.in(0), 0, k.out(0));
  return Status::ok();
}

Status slice_kernel(const KernelContext& k) {
  TO_ASSIGN_OR_RETURN(const SliceAttributes* a, k.attributes<SliceAttributes>());
  const Dims& x = k.in_shape(0);
  const Dims& y = k.out_shape(0);
  const std::vector<int64_t>& start = a->start;
  const std::vector<int64_t> step = a->strides(x.rank());
  const auto in_strides = strides_of(x);
  std::vector<int64_t> strides;
  int64_t base = 0;
  for (size_t i = 0; i < x.rank(); ++i) {
    if (y[i] > 0) {
      const int64_t last = start[i] + (y[i] - 1) * step[i];
      if (start[i] < 0 || start[i] >= x[i] || last < 0 || last >= x[i])
        return invalid_argument("layer '{}' (slice): dim {} reads [{}..{}] outside [0, {})", k.layer(), i, start[i], last, x[i]);
    }
    strides.push_back(in_strides[i] * step[i]);
    base += start[i] * in_strides[i];
  }
  if (count_of(y) > 0) gather_strided(y, strides, k.in(0), base, k.out(0));
  return Status::ok();
}

Status concat_kernel(const KernelContext& k) {
  const Dims& y = k.out_shape(0);
  TO_ASSIGN_OR_RETURN(const ConcatAttributes* a, k.attributes<ConcatAttributes>());
  TO_ASSIGN_OR_RETURN(const int64_t axis, k.axis(a->axis, y.rank()));
  const AxisSplit out = split_at(y, axis);
  int64_t offset = 0;
  for (size_t i = 0; i < k.inputs.size(); ++i) {
    const AxisSplit in = split_at(k.in_shape(i), axis);
    const int64_t block = in.size * in.inner;
    for (int64_t o = 0; o < out.outer; ++o)
      std::copy(k.in(i) + o * block, k.in(i) + (o + 1) * block, k.out(0) + o * out.size * out.inner + offset);
    offset += block;
  }
  return Status::ok();
}

Status pad_kernel(const KernelContext& k) {
  const Dims& x = k.in_shape(0);
  const Dims& y = k.out_shape(0);
  TO_ASSIGN_OR_RETURN(const PadAttributes* a, k.attributes<PadAttributes>());
  const std::vector<int64_t>& pre = a->pre;
  const PadMode mode = a->mode;
  const double value = a->value;
  // Per dim and output coordinate: the input coordinate, or -1 for the constant value.
  std::vector<std::vector<int64_t>> source(x.rank());
  for (size_t d = 0; d < x.rank(); ++d) {
    const int64_t before = d + pre.size() >= x.rank() ? pre[d + pre.size() - x.rank()] : 0;
    const int64_t n = x[d];
    for (int64_t o = 0; o < y[d]; ++o) {
      int64_t i = o - before;
      if (i < 0 || i >= n) {
        switch (mode) {
          case PadMode::kConstant: i = -1; break;
          case PadMode::kReflect: i = i < 0 ? -i : 2 * (n - 1) - i; break;
          case PadMode::kReplicate: i = i < 0 ? 0 : n - 1; break;
          case PadMode::kCircular: i = ((i % n) + n) % n; break;
        }
      }
      source[d].push_back(i);
    }
  }
  const auto in_strides = strides_of(x);
  const int64_t total = count_of(y);
  parallel_for(total, 1 << 14, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> coord(y.rank());
    for (int64_t flat = begin; flat < end; ++flat) {
      int64_t rest = flat, offset = 0;
      bool outside = false;
      for (size_t d = y.rank(); d-- > 0;) {
        const int64_t src = source[d][rest % y[d]];
        rest /= y[d];
        if (src < 0) outside = true;
        offset += src * in_strides[d];
      }
      k.out(0)[flat] = outside ? value : k.in(0)[offset];
    }
  });
  return Status::ok();
}

Status gather_kernel(const KernelContext& k) {
  const Dims& data = k.in_shape(0);
  TO_ASSIGN_OR_RETURN(const GatherAttributes* a, k.attributes<GatherAttributes>());
  TO_ASSIGN_OR_RETURN(const int64_t axis, k.axis(a->axis, data.rank()));
  const AxisSplit s = split_at(data, axis);
  const int64_t indices = count_of(k.in_shape(1));
  for (int64_t j = 0; j < indices; ++j) {
    const double v = k.in(1)[j];
    if (v < -static_cast<double>(s.size) || v >= static_cast<double>(s.size))
      return invalid_argument("layer '{}' (gather): index {} at position {} is outside [-{}, {})", k.layer(),
                              static_cast<int64_t>(v), j, s.size, s.size);
  }
  parallel_for(s.outer * indices, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t o = r / indices, j = r % indices;
      int64_t idx = static_cast<int64_t>(k.in(1)[j]);
      if (idx < 0) idx += s.size;
      const double* src = k.in(0) + (o * s.size + idx) * s.inner;
      std::copy(src, src + s.inner, k.out(0) + r * s.inner);
    }
  });
  return Status::ok();
}

Status iota_kernel(const KernelContext& k) {
  double* out = k.out(0);
  const int64_t n = count_of(k.out_shape(0));
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<double>(i);
  return Status::ok();
}

Status select_kernel(const KernelContext& k) {
  const Dims& y = k.out_shape(0);
  const auto s0 = broadcast_strides(k.in_shape(0), y), s1 = broadcast_strides(k.in_shape(1), y),
             s2 = broadcast_strides(k.in_shape(2), y);
  parallel_for(count_of(y), 1 << 15, [&](int64_t begin, int64_t end) {
    BroadcastCursor c(y, {s0, s1, s2});
    c.seek(begin);
    for (int64_t i = begin; i < end; ++i, c.next())
      k.out(0)[i] = k.in(0)[c.offset(0)] != 0 ? k.in(1)[c.offset(1)] : k.in(2)[c.offset(2)];
  });
  return Status::ok();
}

}  // namespace tensoracle::backends::cpu
