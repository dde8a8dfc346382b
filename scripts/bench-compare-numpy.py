#!/usr/bin/env python3
"""Times NumPy computing compare_outputs' metrics, for bench/compare (which runs this script as a
subprocess so that both sides are measured in the same run).

    .venv/bin/python scripts/bench-compare-numpy.py [--log2n 28] [--repeats 3]

Computes, on two fp32 arrays of 2^log2n elements, what compare_outputs computes with a tolerance:
NaN/+inf/-inf counts per side, and over finite pairs in fp64: max |c-r|, ||c-r||/||r||, cosine
similarity, the count of |c-r| > atol + rtol*|r| and the worst element. Two implementations:
  whole    the direct NumPy code a careful user would write (whole-array fp64 temporaries, reused
           in place; BLAS dot products)
  chunked  the same over 2^20-element slices (temporaries stay in cache; usually faster)
Prints one JSON object: {"n", "whole_s", "chunked_s", "best_s", "numpy_version"} with the median
seconds of each; generating the inputs is not timed.
"""
import argparse
import json
import statistics
import time

import numpy as np

ATOL, RTOL = 1e-5, 1e-3


def metrics(c, r):
    """The metrics of one (whole or partial) pair, as sums that combine across slices."""
    counts = [int(np.isnan(x).sum()) for x in (c, r)] + [int(np.isposinf(x).sum()) for x in (c, r)] + \
             [int(np.isneginf(x).sum()) for x in (c, r)]
    c64, r64 = c.astype(np.float64), r.astype(np.float64)
    finite = np.isfinite(c64) & np.isfinite(r64)
    if not finite.all():
        c64, r64 = c64[finite], r64[finite]
    # In-place where possible: whole-array temporaries of 2^28 fp64 are 2 GiB each.
    d = c64 - r64
    dd = float(np.dot(d, d))
    ad = np.abs(d, out=d)
    bound = np.abs(r64)
    bound *= RTOL
    bound += ATOL
    excess = np.subtract(ad, bound, out=bound)
    worst = int(np.argmax(excess)) if excess.size else -1
    return {
        "counts": counts,
        "max_abs": float(ad.max(initial=0.0)),
        "dd": dd, "rr": float(np.dot(r64, r64)), "cc": float(np.dot(c64, c64)), "cr": float(np.dot(c64, r64)),
        "outside": int(np.count_nonzero(excess > 0)) + int((~finite).sum()),
        "worst": (float(excess[worst]) if worst >= 0 else -np.inf, worst),
    }


def finish(m):
    rel_l2 = np.sqrt(m["dd"]) / np.sqrt(m["rr"])
    cosine = m["cr"] / np.sqrt(m["cc"] * m["rr"])
    return rel_l2, cosine, m["max_abs"], m["outside"], m["worst"]


def whole(c, r):
    return finish(metrics(c, r))


def chunked(c, r, chunk=1 << 20):
    total = None
    for begin in range(0, c.size, chunk):
        m = metrics(c[begin:begin + chunk], r[begin:begin + chunk])
        m["worst"] = (m["worst"][0], m["worst"][1] + begin)
        if total is None:
            total = m
            continue
        total["counts"] = [a + b for a, b in zip(total["counts"], m["counts"])]
        total["max_abs"] = max(total["max_abs"], m["max_abs"])
        for key in ("dd", "rr", "cc", "cr", "outside"):
            total[key] += m[key]
        if m["worst"][0] > total["worst"][0]:
            total["worst"] = m["worst"]
    return finish(total)


def median_seconds(fn, c, r, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(c, r)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2n", type=int, default=28)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    n = 1 << args.log2n
    rng = np.random.default_rng(1)
    r = rng.standard_normal(n, dtype=np.float32)
    c = r + np.float32(1e-4) * rng.standard_normal(n, dtype=np.float32)
    assert np.allclose(whole(c[:1 << 16], r[:1 << 16])[:2], chunked(c[:1 << 16], r[:1 << 16], 1 << 12)[:2])
    whole_s = median_seconds(whole, c, r, args.repeats)
    chunked_s = median_seconds(chunked, c, r, args.repeats)
    print(json.dumps({"n": n, "whole_s": whole_s, "chunked_s": chunked_s, "best_s": min(whole_s, chunked_s),
                      "numpy_version": np.__version__}))


if __name__ == "__main__":
    main()
