// matmul: batched, broadcast, transposes; OpenBLAS dgemm per batch (fp64 accumulation).
#include <cblas.h>

#include "backends/cpu/indexing.h"
#include "backends/cpu/kernel.h"

namespace tensoracle::backends::cpu {

namespace {
// A stored operand as a batch of row-major matrices.
struct Operand {
  Dims batch;
  int64_t rows = 0, cols = 0;  // as stored
};
Operand as_matrices(const Dims& shape, bool is_a) {
  std::vector<int64_t> d = shape.values();
  if (d.size() == 1) d.insert(is_a ? d.begin() : d.end(), 1);
  Operand op;
  op.rows = d[d.size() - 2];
  op.cols = d[d.size() - 1];
  op.batch = Dims(std::vector<int64_t>(d.begin(), d.end() - 2));
  return op;
}
}  // namespace

Status matmul_kernel(const KernelContext& k) {
  const Operand a = as_matrices(k.in_shape(0), true);
  const Operand b = as_matrices(k.in_shape(1), false);
  TO_ASSIGN_OR_RETURN(const MatMulAttributes* attributes, k.attributes<MatMulAttributes>());
  const bool ta = attributes->transpose_a && k.in_shape(0).rank() > 1;
  const bool tb = attributes->transpose_b && k.in_shape(1).rank() > 1;
  const int64_t m = ta ? a.cols : a.rows;
  const int64_t kk = ta ? a.rows : a.cols;
  const int64_t n = tb ? b.rows : b.cols;
  // Output batch dims: everything of the output but its matrix dims.
  std::vector<int64_t> batch_dims = k.out_shape(0).values();
  batch_dims.resize(std::max(a.batch.rank(), b.batch.rank()));
  const Dims batch(batch_dims);
  const auto sa = broadcast_strides(a.batch, batch);
  const auto sb = broadcast_strides(b.batch, batch);
  const int64_t batches = count_of(batch);
  BroadcastCursor cursor(batch, {sa, sb});
  cursor.seek(0);
  for (int64_t i = 0; i < batches; ++i, cursor.next()) {
    const double* pa = k.in(0) + cursor.offset(0) * a.rows * a.cols;
    const double* pb = k.in(1) + cursor.offset(1) * b.rows * b.cols;
    double* pc = k.out(0) + i * m * n;
    if (m == 0 || n == 0) continue;
    if (kk == 0) {
      std::fill(pc, pc + m * n, 0.0);
      continue;
    }
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(m),
                static_cast<int>(n), static_cast<int>(kk), 1.0, pa, static_cast<int>(a.cols), pb,
                static_cast<int>(b.cols), 0.0, pc, static_cast<int>(n));
  }
  return Status::ok();
}

}  // namespace tensoracle::backends::cpu
