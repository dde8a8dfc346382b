// The one-pass accumulation behind compare_outputs: sums, maxima, non-finite counts and the
// tolerance check of a candidate/reference pair, computed over fixed-size chunks in parallel
// and merged in chunk order (so results do not depend on the thread count).
#pragma once

#include <cstdint>
#include <limits>

#include "tensoracle/compare.h"
#include "tensoracle/types.h"

namespace tensoracle::compare_detail {

struct PairStats {
  NonFiniteCounts candidate;
  NonFiniteCounts reference;
  int64_t finite_pairs = 0;

  // Over finite pairs.
  double sum_dd = 0.0;  // sum (c - r)^2
  double sum_rr = 0.0;  // sum r^2
  double sum_cc = 0.0;  // sum c^2
  double sum_cr = 0.0;  // sum c * r
  double max_abs_diff = 0.0;
  double max_abs_candidate = 0.0;
  double max_abs_reference = 0.0;

  // Tolerance check (only when one was given).
  int64_t outside = 0;
  bool has_worst = false;
  int64_t worst_index = 0;  // flat, C order
  double worst_excess = -std::numeric_limits<double>::infinity();
  double worst_candidate = 0.0;
  double worst_reference = 0.0;

  // Folds `later` (covering higher indices) into this.
  void merge(const PairStats& later);
};

struct PairInput {
  DataType candidate_dtype = DataType::kFloat32;
  const void* candidate = nullptr;
  DataType reference_dtype = DataType::kFloat32;
  const void* reference = nullptr;
  int64_t count = 0;
};

// Accumulates everything over all `count` elements; `tolerance` may be null (no tolerance
// check). `threads` = 0 means one per hardware thread.
PairStats accumulate_pair(const PairInput& input, const Tolerance* tolerance, unsigned threads);

// Only the sums (sum_dd, sum_rr, sum_cc, sum_cr) of every value multiplied by `scale`, a power
// of two, which keeps them exact: fp64 data near the ends of its range would otherwise
// overflow or underflow when squared.
PairStats accumulate_scaled_sums(const PairInput& input, double scale, unsigned threads);

}  // namespace tensoracle::compare_detail
