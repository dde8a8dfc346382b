// attention: softmax(q k^T * scale + mask) v per batch and query, fp64 throughout.
#include <cmath>

#include "backends/cpu/indexing.h"
#include "backends/cpu/kernel.h"
#include "backends/cpu/parallel.h"

namespace tensoracle::backends::cpu {

Status attention_kernel(const KernelContext& k) {
  const Dims &q = k.in_shape(0), &kd = k.in_shape(1), &v = k.in_shape(2), &y = k.out_shape(0);
  const int64_t lq = q[q.rank() - 2], d = q[q.rank() - 1], lk = kd[kd.rank() - 2], dv = v[v.rank() - 1];
  TO_ASSIGN_OR_RETURN(const AttentionAttributes* a, k.attributes<AttentionAttributes>());
  const double scale = a->scale_for(d);
  const bool causal = a->causal;
  const bool has_mask = k.has(3);
  const bool bool_mask = has_mask && k.in_desc(3).dtype == DataType::kBool;
  auto batch_of = [](const Dims& s) { return Dims(std::vector<int64_t>(s.values().begin(), s.values().end() - 2)); };
  const Dims batch = batch_of(y);
  const int64_t batches = count_of(batch);
  const auto sq = broadcast_strides(batch_of(q), batch), sk = broadcast_strides(batch_of(kd), batch),
             sv = broadcast_strides(batch_of(v), batch);
  // The mask broadcast over the full scores shape [batch..., lq, lk].
  std::vector<int64_t> scores_dims = batch.values();
  scores_dims.push_back(lq);
  scores_dims.push_back(lk);
  const std::vector<int64_t> sm = has_mask ? broadcast_strides(k.in_shape(3), Dims(scores_dims)) : std::vector<int64_t>();
  const size_t nb = batch.rank();
  parallel_for(batches * lq, 4, [&](int64_t begin, int64_t end) {
    std::vector<double> p(static_cast<size_t>(lk));
    std::vector<int64_t> coord(nb);
    for (int64_t r = begin; r < end; ++r) {
      const int64_t b = r / lq, i = r % lq;
      int64_t rest = b, oq = 0, ok = 0, ov = 0, om = 0;
      for (size_t dim = nb; dim-- > 0;) {
        const int64_t c = rest % batch[dim];
        rest /= batch[dim];
        oq += c * sq[dim];
        ok += c * sk[dim];
        ov += c * sv[dim];
        if (has_mask) om += c * sm[dim];
      }
      const double* qi = k.in(0) + (oq * lq + i) * d;
      const double* kb = k.in(1) + ok * lk * d;
      const double* vb = k.in(2) + ov * lk * dv;
      double max = -INFINITY;
      for (int64_t j = 0; j < lk; ++j) {
        double s = 0;
        for (int64_t t = 0; t < d; ++t) s += qi[t] * kb[j * d + t];
        s *= scale;
        if (has_mask) {
          const double m = k.in(3)[om + i * sm[nb] + j * sm[nb + 1]];
          s = bool_mask ? (m != 0 ? s : -INFINITY) : s + m;
        }
        if (causal && j > i) s = -INFINITY;
        p[j] = s;
        max = std::max(max, s);
      }
      // A fully masked row has no valid weights: NaN, as PyTorch gives.
      double sum = 0;
      for (int64_t j = 0; j < lk; ++j) sum += (p[j] = std::exp(p[j] - max));
      double* out = k.out(0) + r * dv;
      for (int64_t t = 0; t < dv; ++t) out[t] = 0;
      for (int64_t j = 0; j < lk; ++j) {
        const double w = p[j] / sum;
        for (int64_t t = 0; t < dv; ++t) out[t] += w * vb[j * dv + t];
      }
    }
  });
  return Status::ok();
}

}  // namespace tensoracle::backends::cpu
