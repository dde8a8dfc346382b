"""The timing harness, as `tensoracle bench` (docs/bench.md): bench_engine times one engine,
bench_ab two interleaved with a confidence interval on their ratio, each with a load check that
marks a run invalid when something else used the GPU (NVML) or the host."""

from ._tensoracle import (AbReport, AbRun, BenchReport, BenchSettings, BootstrapSettings, LoadCheck, RatioInterval,
                          TimingRun, TimingStats, bench_ab, bench_engine)

__all__ = ["AbReport", "AbRun", "BenchReport", "BenchSettings", "BootstrapSettings", "LoadCheck", "RatioInterval",
           "TimingRun", "TimingStats", "bench_ab", "bench_engine"]
