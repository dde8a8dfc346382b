// pooling: max and average over 1-3 trailing dims (treated as 3D), PyTorch's window rules.
#include <array>
#include <cmath>

#include "backends/cpu/indexing.h"
#include "backends/cpu/kernel.h"
#include "backends/cpu/parallel.h"

namespace tensoracle::backends::cpu {

Status pooling_kernel(const KernelContext& k) {
  const Dims& x = k.in_shape(0);
  const Dims& y = k.out_shape(0);
  TO_ASSIGN_OR_RETURN(const PoolingAttributes* attrs, k.attributes<PoolingAttributes>());
  const bool global = attrs->global;
  const bool is_max = attrs->kind == PoolingKind::kMax;
  const bool include_pad = attrs->count_include_pad;
  const size_t n = global ? x.rank() - 2 : attrs->window.size();
  if (n > 3) return unsupported("layer '{}': pooling over {} dims (the cpu backend pools 1 to 3)", k.layer(), n);
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, win{1, 1, 1}, stride{1, 1, 1}, pre{0, 0, 0}, post{0, 0, 0};
  const auto strides = attrs->strides(n), pres = attrs->pre_paddings(n), posts = attrs->post_paddings(n);
  for (size_t i = 0; i < n; ++i) {
    const size_t d = 3 - n + i;
    in[d] = x[x.rank() - n + i];
    out[d] = y[y.rank() - n + i];
    win[d] = global ? in[d] : attrs->window[i];
    stride[d] = global ? win[d] : strides[i];
    pre[d] = pres[i];
    post[d] = posts[i];
  }
  const int64_t in_size = in[0] * in[1] * in[2], out_size = out[0] * out[1] * out[2];
  const int64_t planes = out_size ? count_of(y) / out_size : 0;
  const double* src = k.in(0);
  double* dst = k.out(0);
  parallel_for(planes, 1, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const double* plane = src + p * in_size;
      for (int64_t o = 0; o < out_size; ++o) {
        const int64_t oc[3] = {o / (out[1] * out[2]), (o / out[2]) % out[1], o % out[2]};
        int64_t lo[3], hi[3];
        int64_t padded_count = 1;
        for (int d = 0; d < 3; ++d) {
          const int64_t start = oc[d] * stride[d] - pre[d];
          // The window clipped to the padded extent counts for count_include_pad (PyTorch).
          const int64_t padded_end = std::min(start + win[d], in[d] + post[d]);
          padded_count *= padded_end - start;
          lo[d] = std::max<int64_t>(start, 0);
          hi[d] = std::min(start + win[d], in[d]);
        }
        double acc = is_max ? -INFINITY : 0.0;
        int64_t count = 0;
        for (int64_t a = lo[0]; a < hi[0]; ++a)
          for (int64_t b = lo[1]; b < hi[1]; ++b)
            for (int64_t c = lo[2]; c < hi[2]; ++c) {
              const double v = plane[(a * in[1] + b) * in[2] + c];
              if (is_max) {
                if (v > acc || std::isnan(v)) acc = v;
                if (std::isnan(acc)) goto done;
              } else {
                acc += v;
              }
              ++count;
            }
      done:
        dst[p * out_size + o] = is_max ? acc : acc / static_cast<double>(include_pad ? padded_count : count);
      }
    }
  });
  return Status::ok();
}

}  // namespace tensoracle::backends::cpu
