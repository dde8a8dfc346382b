// The inner loop of the comparison: one block of at most kBlock elements, already in a native
// floating type (float or double), folded into a PairStats.
//
// The fast path assumes every element is finite and keeps kLanes independent fp64 partial sums,
// counts and maxima, a form GCC and Clang vectorize without -ffast-math (each lane is an exact,
// in-order accumulation; nothing is reassociated). It also counts non-finite elements on the side;
// a block that has any is recomputed by the exact scalar path, so NaN and inf cost nothing until
// they appear. The worst element is located by rescanning only a block whose maximum excess beats
// the best so far.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "compare/pair_stats.h"

namespace tensoracle::compare_detail {

inline constexpr int64_t kLanes = 8;
inline constexpr int64_t kBlock = 1024;

#if defined(__GNUC__)
#define TO_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define TO_ALWAYS_INLINE inline
#endif

inline double excess_over(double abs_diff, double abs_reference, const Tolerance& tolerance) {
  const double excess = abs_diff - (tolerance.atol + tolerance.rtol * abs_reference);
  // NaN only when both |c - r| and the tolerance overflow to inf: numpy calls that inside.
  return std::isnan(excess) ? -std::numeric_limits<double>::infinity() : excess;
}

inline void count_non_finite(double value, NonFiniteCounts& counts) {
  if (std::isnan(value)) {
    ++counts.nan;
  } else if (value > 0) {
    ++counts.posinf;
  } else {
    ++counts.neginf;
  }
}

inline void offer_worst(PairStats& stats, int64_t index, double excess, double candidate, double reference) {
  if (stats.has_worst && !(excess > stats.worst_excess)) return;
  stats.has_worst = true;
  stats.worst_index = index;
  stats.worst_excess = excess;
  stats.worst_candidate = candidate;
  stats.worst_reference = reference;
}

// The exact path for one element: classifies non-finite values.
template <bool kTolerance>
TO_ALWAYS_INLINE void scalar_element(double c, double r, int64_t index, const Tolerance& tolerance,
                                     PairStats& stats) {
  const bool c_finite = std::isfinite(c);
  const bool r_finite = std::isfinite(r);
  if (c_finite && r_finite) {
    const double d = c - r;
    const double abs_diff = std::fabs(d);
    ++stats.finite_pairs;
    stats.sum_dd += d * d;
    stats.sum_rr += r * r;
    stats.sum_cc += c * c;
    stats.sum_cr += c * r;
    stats.max_abs_diff = abs_diff > stats.max_abs_diff ? abs_diff : stats.max_abs_diff;
    stats.max_abs_candidate = std::fabs(c) > stats.max_abs_candidate ? std::fabs(c) : stats.max_abs_candidate;
    stats.max_abs_reference = std::fabs(r) > stats.max_abs_reference ? std::fabs(r) : stats.max_abs_reference;
    if constexpr (kTolerance) {
      const double excess = excess_over(abs_diff, std::fabs(r), tolerance);
      if (excess > 0) ++stats.outside;
      offer_worst(stats, index, excess, c, r);
    }
    return;
  }
  if (!c_finite) count_non_finite(c, stats.candidate);
  if (!r_finite) count_non_finite(r, stats.reference);
  if constexpr (kTolerance) {
    const bool inside = (std::isnan(c) && std::isnan(r)) || c == r;
    if (!inside) {
      ++stats.outside;
      offer_worst(stats, index, std::numeric_limits<double>::infinity(), c, r);
    }
  }
}

template <bool kTolerance, typename C, typename R>
TO_ALWAYS_INLINE void scalar_range(const C* c, const R* r, int64_t begin, int64_t end, int64_t base,
                                   const Tolerance& tolerance, PairStats& stats) {
  for (int64_t i = begin; i < end; ++i) {
    scalar_element<kTolerance>(static_cast<double>(c[i]), static_cast<double>(r[i]), base + i, tolerance, stats);
  }
}

// Folds elements [0, n) of `c` and `r`, whose flat indices start at `base`, into `stats`.
template <bool kTolerance, typename C, typename R>
TO_ALWAYS_INLINE void block_kernel(const C* c, const R* r, int64_t n, int64_t base, const Tolerance& tolerance,
                                   PairStats& stats) {
  constexpr double kMax = std::numeric_limits<double>::max();
  constexpr double kNegInf = -std::numeric_limits<double>::infinity();
  const double atol = tolerance.atol;
  const double rtol = tolerance.rtol;
  double dd[kLanes] = {}, rr[kLanes] = {}, cc[kLanes] = {}, cr[kLanes] = {};
  double md[kLanes] = {}, mc[kLanes] = {}, mr[kLanes] = {};
  double bad[kLanes] = {}, out[kLanes] = {}, mx[kLanes];
  for (int64_t j = 0; j < kLanes; ++j) mx[j] = kNegInf;

  const int64_t vector_end = n - n % kLanes;
  for (int64_t i = 0; i < vector_end; i += kLanes) {
    for (int64_t j = 0; j < kLanes; ++j) {
      const double cv = static_cast<double>(c[i + j]);
      const double rv = static_cast<double>(r[i + j]);
      const double ac = std::fabs(cv);
      const double ar = std::fabs(rv);
      const double d = cv - rv;
      const double ad = std::fabs(d);
      bad[j] += ((ac <= kMax) & (ar <= kMax)) ? 0.0 : 1.0;  // NaN compares false
      dd[j] += d * d;
      rr[j] += rv * rv;
      cc[j] += cv * cv;
      cr[j] += cv * rv;
      md[j] = ad > md[j] ? ad : md[j];
      mc[j] = ac > mc[j] ? ac : mc[j];
      mr[j] = ar > mr[j] ? ar : mr[j];
      if constexpr (kTolerance) {
        const double e = ad - (atol + rtol * ar);
        out[j] += e > 0.0 ? 1.0 : 0.0;
        mx[j] = e > mx[j] ? e : mx[j];
      }
    }
  }

  double bad_total = 0.0;
  for (int64_t j = 0; j < kLanes; ++j) bad_total += bad[j];
  if (bad_total != 0.0) {
    scalar_range<kTolerance>(c, r, 0, n, base, tolerance, stats);
    return;
  }

  double block_max_excess = kNegInf;
  for (int64_t j = 0; j < kLanes; ++j) {
    stats.sum_dd += dd[j];
    stats.sum_rr += rr[j];
    stats.sum_cc += cc[j];
    stats.sum_cr += cr[j];
    stats.max_abs_diff = md[j] > stats.max_abs_diff ? md[j] : stats.max_abs_diff;
    stats.max_abs_candidate = mc[j] > stats.max_abs_candidate ? mc[j] : stats.max_abs_candidate;
    stats.max_abs_reference = mr[j] > stats.max_abs_reference ? mr[j] : stats.max_abs_reference;
    stats.outside += static_cast<int64_t>(out[j]);
    block_max_excess = mx[j] > block_max_excess ? mx[j] : block_max_excess;
  }
  stats.finite_pairs += vector_end;

  if constexpr (kTolerance) {
    if (vector_end > 0 && (!stats.has_worst || block_max_excess > stats.worst_excess)) {
      for (int64_t i = 0; i < vector_end; ++i) {
        const double cv = static_cast<double>(c[i]);
        const double rv = static_cast<double>(r[i]);
        offer_worst(stats, base + i, excess_over(std::fabs(cv - rv), std::fabs(rv), tolerance), cv, rv);
      }
    }
  }
  scalar_range<kTolerance>(c, r, vector_end, n, base, tolerance, stats);
}

}  // namespace tensoracle::compare_detail
