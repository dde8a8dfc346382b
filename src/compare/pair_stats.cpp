#include "compare/pair_stats.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "compare/block_kernel.h"
#include "tensoracle/float_formats.h"

namespace tensoracle::compare_detail {
namespace {

// Elements per unit of parallel work. Chunks are fixed, independent of the thread count, and
// merged in order, so the fp64 sums come out bit-identical for any number of threads.
constexpr int64_t kChunk = int64_t{1} << 16;

// The hot kernels are compiled for several instruction sets and picked at load time, so one
// portable binary still uses AVX2 / AVX-512 where the CPU has them.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TO_VECTOR_CLONES __attribute__((target_clones("default", "avx2", "avx512f")))
#else
#define TO_VECTOR_CLONES
#endif

// One non-template entry point per (candidate type, reference type, tolerance?) so that the
// multi-versioning attribute applies to plain functions.
#define TO_DEFINE_BLOCK_FN(name, C, R, kTol)                                                        \
  TO_VECTOR_CLONES void name(const void* c, const void* r, int64_t n, int64_t base, const Tolerance& t, \
                             PairStats& s) {                                                       \
    block_kernel<kTol>(static_cast<const C*>(c), static_cast<const R*>(r), n, base, t, s);         \
  }
TO_DEFINE_BLOCK_FN(block_ff, float, float, false)
TO_DEFINE_BLOCK_FN(block_fd, float, double, false)
TO_DEFINE_BLOCK_FN(block_df, double, float, false)
TO_DEFINE_BLOCK_FN(block_dd, double, double, false)
TO_DEFINE_BLOCK_FN(block_ff_tol, float, float, true)
TO_DEFINE_BLOCK_FN(block_fd_tol, float, double, true)
TO_DEFINE_BLOCK_FN(block_df_tol, double, float, true)
TO_DEFINE_BLOCK_FN(block_dd_tol, double, double, true)
#undef TO_DEFINE_BLOCK_FN

using BlockFn = void (*)(const void*, const void*, int64_t, int64_t, const Tolerance&, PairStats&);

bool is_native(DataType type) { return type == DataType::kFloat32 || type == DataType::kFloat64; }

// A side as the kernel sees it: fp32 and fp64 are read in place; every other type (and any
// scaled side) is widened block by block into an fp64 buffer.
struct Side {
  DataType dtype;
  const char* data;
  bool in_place;
  double scale;

  const void* block(int64_t begin, int64_t n, double* buffer) const {
    const size_t element_size = data_type_size(dtype);
    const char* source = data + static_cast<size_t>(begin) * element_size;
    if (in_place) return source;
    convert_elements(dtype, source, DataType::kFloat64, buffer, static_cast<size_t>(n));
    if (scale != 1.0) {
      for (int64_t i = 0; i < n; ++i) buffer[i] *= scale;
    }
    return buffer;
  }
  // The type the kernel reads: float only for in-place fp32.
  bool reads_float() const { return in_place && dtype == DataType::kFloat32; }
};

BlockFn pick_block_fn(const Side& c, const Side& r, bool tolerance) {
  const bool cf = c.reads_float();
  const bool rf = r.reads_float();
  if (tolerance) {
    return cf ? (rf ? block_ff_tol : block_fd_tol) : (rf ? block_df_tol : block_dd_tol);
  }
  return cf ? (rf ? block_ff : block_fd) : (rf ? block_df : block_dd);
}

PairStats accumulate(const PairInput& input, const Tolerance* tolerance, unsigned threads, double scale) {
  const bool scaled = scale != 1.0;
  const Side c{input.candidate_dtype, static_cast<const char*>(input.candidate),
               is_native(input.candidate_dtype) && !scaled, scale};
  const Side r{input.reference_dtype, static_cast<const char*>(input.reference),
               is_native(input.reference_dtype) && !scaled, scale};
  const BlockFn block_fn = pick_block_fn(c, r, tolerance != nullptr);
  const Tolerance no_tolerance;
  const Tolerance& tol = tolerance != nullptr ? *tolerance : no_tolerance;

  const int64_t chunk_count = (input.count + kChunk - 1) / kChunk;
  std::vector<PairStats> partials(static_cast<size_t>(chunk_count));
  std::atomic<int64_t> next_chunk{0};
  auto work = [&] {
    std::vector<double> c_buffer(c.in_place ? 0 : kBlock);
    std::vector<double> r_buffer(r.in_place ? 0 : kBlock);
    for (int64_t chunk = next_chunk++; chunk < chunk_count; chunk = next_chunk++) {
      PairStats stats;  // local: neighbouring chunks' partials would share cache lines
      const int64_t end = std::min(input.count, (chunk + 1) * kChunk);
      for (int64_t begin = chunk * kChunk; begin < end; begin += kBlock) {
        const int64_t n = std::min(kBlock, end - begin);
        block_fn(c.block(begin, n, c_buffer.data()), r.block(begin, n, r_buffer.data()), n, begin, tol, stats);
      }
      partials[static_cast<size_t>(chunk)] = stats;
    }
  };

  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  const auto helpers = static_cast<size_t>(std::max<int64_t>(0, std::min<int64_t>(threads, chunk_count) - 1));
  std::vector<std::thread> workers;
  workers.reserve(helpers);
  for (size_t i = 0; i < helpers; ++i) {
    try {
      workers.emplace_back(work);
    } catch (...) {
      break;  // the threads already started and this one still cover every chunk
    }
  }
  work();
  for (auto& worker : workers) worker.join();

  PairStats total;
  for (const PairStats& partial : partials) total.merge(partial);
  return total;
}

}  // namespace

void PairStats::merge(const PairStats& later) {
  candidate.nan += later.candidate.nan;
  candidate.posinf += later.candidate.posinf;
  candidate.neginf += later.candidate.neginf;
  reference.nan += later.reference.nan;
  reference.posinf += later.reference.posinf;
  reference.neginf += later.reference.neginf;
  finite_pairs += later.finite_pairs;
  sum_dd += later.sum_dd;
  sum_rr += later.sum_rr;
  sum_cc += later.sum_cc;
  sum_cr += later.sum_cr;
  max_abs_diff = std::max(max_abs_diff, later.max_abs_diff);
  max_abs_candidate = std::max(max_abs_candidate, later.max_abs_candidate);
  max_abs_reference = std::max(max_abs_reference, later.max_abs_reference);
  outside += later.outside;
  if (later.has_worst) {
    offer_worst(*this, later.worst_index, later.worst_excess, later.worst_candidate, later.worst_reference);
  }
}

PairStats accumulate_pair(const PairInput& input, const Tolerance* tolerance, unsigned threads) {
  return accumulate(input, tolerance, threads, 1.0);
}

PairStats accumulate_scaled_sums(const PairInput& input, double scale, unsigned threads) {
  return accumulate(input, nullptr, threads, scale);
}

}  // namespace tensoracle::compare_detail
