// Checks shared by the normalization ops.
#pragma once

#include "graph/op_def.h"

namespace tensoracle::graph {

inline Status check_epsilon(const InferContext& ctx, double eps) {
  if (!(eps >= 0)) return ctx.error("epsilon {} must be >= 0", eps);
  return Status::ok();
}

// The normalized dims [axis, rank) of input 0 (layer norm, RMS norm).
inline Result<Dims> trailing_dims(const InferContext& ctx, int64_t axis) {
  const Dims& x = ctx.in(0).shape;
  auto a = normalize_axis(axis, x.rank());
  if (!a) return ctx.error("axis {} is out of range for {}", axis, ctx.describe(0));
  return Dims(std::vector<int64_t>(x.values().begin() + *a, x.values().end()));
}

// An optional parameter input i (scale, bias, ...) that must have the input's type and `shape`.
inline Status check_parameter(const InferContext& ctx, size_t i, const Dims& shape) {
  if (!ctx.has(i)) return Status::ok();
  TO_RETURN_IF_ERROR(ctx.require_same_type(0, i));
  const Dims& p = ctx.in(i).shape;
  bool ok = p.rank() == shape.rank();
  for (size_t d = 0; ok && d < p.rank(); ++d) ok = dims_agree(p[d], shape[d]);
  if (!ok) return ctx.error("{} must have shape {}", ctx.describe(i), shape.to_string());
  return Status::ok();
}

}  // namespace tensoracle::graph
