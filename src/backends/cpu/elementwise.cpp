// elementwise: binary ops with numpy broadcasting (docs/ops.md "Elementwise").
#include <cmath>
#include <limits>

#include "backends/cpu/indexing.h"
#include "backends/cpu/kernel.h"
#include "backends/cpu/parallel.h"

namespace tensoracle::backends::cpu {

namespace {

template <typename F>
void binary_map(const KernelContext& k, F f) {
  const Dims& out_shape = k.out_shape(0);
  const int64_t n = count_of(out_shape);
  const double* a = k.in(0);
  const double* b = k.in(1);
  double* out = k.out(0);
  const bool same = k.in_shape(0) == out_shape && k.in_shape(1) == out_shape;
  const auto sa = broadcast_strides(k.in_shape(0), out_shape);
  const auto sb = broadcast_strides(k.in_shape(1), out_shape);
  parallel_for(n, 1 << 15, [&](int64_t begin, int64_t end) {
    if (same) {
      for (int64_t i = begin; i < end; ++i) out[i] = f(a[i], b[i]);
      return;
    }
    BroadcastCursor cursor(out_shape, {sa, sb});
    cursor.seek(begin);
    for (int64_t i = begin; i < end; ++i, cursor.next()) out[i] = f(a[cursor.offset(0)], b[cursor.offset(1)]);
  });
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// x mod y with the sign of y (numpy.mod, Python %): fmod, moved into y's sign; a zero result
// takes y's sign too.
double floor_mod(double x, double y) {
  const double r = std::fmod(x, y);
  if (r == 0) return std::copysign(0.0, y);
  return (r < 0) != (y < 0) ? r + y : r;
}

}  // namespace

Status elementwise_kernel(const KernelContext& k) {
  TO_ASSIGN_OR_RETURN(const ElementwiseAttributes* a, k.attributes<ElementwiseAttributes>());
  const ElementwiseOp op = a->op;
  const bool integer = is_integer(k.in_desc(0).dtype);
  switch (op) {
    case ElementwiseOp::kAdd: binary_map(k, [](double x, double y) { return x + y; }); break;
    case ElementwiseOp::kSub: binary_map(k, [](double x, double y) { return x - y; }); break;
    case ElementwiseOp::kMul: binary_map(k, [](double x, double y) { return x * y; }); break;
    case ElementwiseOp::kDiv:
      if (integer)  // truncating division; x / 0 is 0
        binary_map(k, [](double x, double y) { return y == 0 ? 0.0 : std::trunc(x / y); });
      else
        binary_map(k, [](double x, double y) { return x / y; });
      break;
    case ElementwiseOp::kPow: binary_map(k, [](double x, double y) { return std::pow(x, y); }); break;
    case ElementwiseOp::kMax:
      binary_map(k, [](double x, double y) { return std::isnan(x) || std::isnan(y) ? kNaN : std::max(x, y); });
      break;
    case ElementwiseOp::kMin:
      binary_map(k, [](double x, double y) { return std::isnan(x) || std::isnan(y) ? kNaN : std::min(x, y); });
      break;
    // Integer x mod 0 is 0 (as numpy's); floats follow fmod (x mod 0 is NaN).
    case ElementwiseOp::kMod:
      if (integer)
        binary_map(k, [](double x, double y) { return y == 0 ? 0.0 : floor_mod(x, y); });
      else
        binary_map(k, [](double x, double y) { return floor_mod(x, y); });
      break;
    case ElementwiseOp::kFmod:
      if (integer)
        binary_map(k, [](double x, double y) { return y == 0 ? 0.0 : std::fmod(x, y); });
      else
        binary_map(k, [](double x, double y) { return std::fmod(x, y); });
      break;
    case ElementwiseOp::kEqual: binary_map(k, [](double x, double y) { return x == y ? 1.0 : 0.0; }); break;
    case ElementwiseOp::kLess: binary_map(k, [](double x, double y) { return x < y ? 1.0 : 0.0; }); break;
    case ElementwiseOp::kGreater: binary_map(k, [](double x, double y) { return x > y ? 1.0 : 0.0; }); break;
    case ElementwiseOp::kLessEqual: binary_map(k, [](double x, double y) { return x <= y ? 1.0 : 0.0; }); break;
    case ElementwiseOp::kGreaterEqual: binary_map(k, [](double x, double y) { return x >= y ? 1.0 : 0.0; }); break;
    case ElementwiseOp::kAnd: binary_map(k, [](double x, double y) { return x != 0 && y != 0 ? 1.0 : 0.0; }); break;
    case ElementwiseOp::kOr: binary_map(k, [](double x, double y) { return x != 0 || y != 0 ? 1.0 : 0.0; }); break;
  }
  return Status::ok();
}

}  // namespace tensoracle::backends::cpu
