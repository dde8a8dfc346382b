// quantize / dequantize: fp32 arithmetic as TensorRT specifies, exact int8 and fp8 e4m3 rounding.
#include <cmath>

#include "backends/cpu/indexing.h"
#include "backends/cpu/kernel.h"
#include "tensoracle/float_formats.h"

namespace tensoracle::backends::cpu {

namespace {
// f(x, scale) per element: the scale is 0's per-tensor, the channel's along `axis` per-channel.
template <typename F>
Status per_element(const KernelContext& k, int64_t axis_attribute, F f) {
  const Dims& x = k.in_shape(0);
  const bool per_channel = k.in_shape(1).rank() == 1 && k.in_shape(1)[0] != 1;
  AxisSplit s;
  if (per_channel) {
    TO_ASSIGN_OR_RETURN(const int64_t axis, k.axis(axis_attribute, x.rank()));
    s = split_at(x, axis);
  }
  const int64_t n = count_of(x);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t channel = per_channel ? (i / s.inner) % s.size : 0;
    k.out(0)[i] = f(k.in(0)[i], k.in(1)[channel]);
  }
  return Status::ok();
}
}  // namespace

Status quantize_kernel(const KernelContext& k) {
  TO_ASSIGN_OR_RETURN(const QuantizeAttributes* a, k.attributes<QuantizeAttributes>());
  const bool fp8 = k.instance.outputs[0].dtype == DataType::kFloat8E4M3;
  return per_element(k, a->axis, [&](double x, double scale) {
    const float v = static_cast<float>(x) / static_cast<float>(scale);
    if (fp8) return static_cast<double>(fp8e4m3_to_float(float_to_fp8e4m3(v, Fp8Overflow::kSaturate)));
    if (std::isnan(v)) return 0.0;
    return std::min(127.0, std::max(-128.0, static_cast<double>(std::nearbyint(v))));  // ties to even
  });
}

Status dequantize_kernel(const KernelContext& k) {
  TO_ASSIGN_OR_RETURN(const DequantizeAttributes* a, k.attributes<DequantizeAttributes>());
  return per_element(k, a->axis,
                     [](double q, double scale) { return static_cast<double>(static_cast<float>(q) * static_cast<float>(scale)); });
}

}  // namespace tensoracle::backends::cpu
