#!/usr/bin/env python3
"""Reference values for the timing harness's statistics (tests/host/bench/statistics_test.cpp).

Writes tests/fixtures/bench/statistics.json: seeded sample sets (log-normal latencies, a constant
set, tiny sets, a set with an outlier) and what NumPy computes for each: min, median, mean,
p90 and p99 (numpy.percentile, method "linear"), max, the sample standard deviation (ddof=1)
and the coefficient of variation. Run with the project's venv:

    .venv/bin/python scripts/gen-bench-fixtures.py
"""
import json
import pathlib

import numpy as np

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "bench" / "statistics.json"


def summary(samples):
    a = np.asarray(samples, dtype=np.float64)
    std = float(np.std(a, ddof=1)) if a.size > 1 else 0.0
    mean = float(np.mean(a))
    return {
        "min": float(np.min(a)), "median": float(np.median(a)), "mean": mean,
        "p90": float(np.percentile(a, 90)), "p99": float(np.percentile(a, 99)), "max": float(np.max(a)),
        "stddev": std, "cv": std / mean if mean > 0 else 0.0,
    }


def main():
    rng = np.random.default_rng(20261203)
    sets = {
        "lognormal_1000": rng.lognormal(mean=0.0, sigma=0.25, size=1000),
        "lognormal_101": rng.lognormal(mean=1.5, sigma=0.1, size=101),
        "uniform_10": rng.uniform(0.5, 2.0, size=10),
        "with_outlier_50": np.concatenate([rng.normal(2.0, 0.01, size=49), [40.0]]),
        "constant_7": np.full(7, 0.125),
        "two": np.array([1.0, 3.0]),
        "one": np.array([2.5]),
    }
    fixture = {name: {"samples": [float(x) for x in s], "numpy": summary(s)} for name, s in sets.items()}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(fixture, indent=1) + "\n")
    print(f"wrote {OUT} ({len(fixture)} sample sets)")


if __name__ == "__main__":
    main()
