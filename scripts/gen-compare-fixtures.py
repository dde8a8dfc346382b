#!/usr/bin/env python3
"""Writes the compare_outputs test fixtures and NumPy's values of every metric for them.

Run from the repository root with the project's venv:  .venv/bin/python scripts/gen-compare-fixtures.py

Writes tests/fixtures/compare/:
  candidate.npz, reference.npz            one entry per case (NumPy dtypes)
  narrow.candidate.safetensors, narrow.reference.safetensors
                                          cases in bf16 / fp8 (ml_dtypes), which .npy cannot name
  single_candidate.npy, single_reference.npy
                                          one array per file with different stems (CLI matching)
  expected.json                           {"atol", "rtol", "cases": {NAME: metrics}} computed here

The metrics follow docs/compare.md, computed with NumPy in fp64 independently of tensoracle: the
outside-tolerance mask is numpy.isclose(c, r, rtol, atol, equal_nan=True) negated; norms and dot
products are taken on values scaled by a power of two (exact) so fp64 extremes neither overflow
nor underflow. Non-finite numbers are written as the strings "inf", "-inf", "nan" (as the CLI's
JSON does). The random seed is fixed, so the output is reproducible.
"""
import json
import math
import pathlib

import ml_dtypes
import numpy as np
import safetensors.numpy

ATOL = 1e-5
RTOL = 1e-3
OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "compare"
rng = np.random.default_rng(20240607)


def noisy(reference, scale, dtype=None, floor=1e-3):
    """reference plus noise of about `scale` * (|reference| + floor): some elements land outside the
    tolerance."""
    ref64 = reference.astype(np.float64)
    noise = rng.standard_normal(reference.shape) * scale * (np.abs(ref64) + floor)
    return (ref64 + noise).astype(dtype or reference.dtype)


def standard_cases():
    cases = {}
    # Random fp32 with a length that is not a multiple of any block or lane count.
    r = rng.standard_normal(10007).astype(np.float32)
    cases["random_fp32"] = (noisy(r, 3e-4), r)
    r = rng.standard_normal((7, 11, 13)).astype(np.float32)
    cases["random_fp32_rank3"] = (noisy(r, 2e-3), r)
    # Magnitudes near fp32's largest: squares only fit in fp64.
    r = (rng.standard_normal(3001) * 1e37).astype(np.float32)
    cases["huge_fp32"] = (noisy(r, 1e-3), r)
    # Subnormal fp32 magnitudes.
    r = (rng.standard_normal(2003) * 1e-40).astype(np.float32)
    cases["tiny_fp32"] = (noisy(r, 1e-1, floor=0.0), r)
    # fp64 across the whole exponent range: sums of squares overflow without rescaling.
    r = rng.standard_normal(1009) * 10.0 ** rng.uniform(250, 300, 1009)
    cases["huge_fp64"] = (noisy(r, 1e-6, floor=0.0), r)
    r = rng.standard_normal(1009) * 10.0 ** rng.uniform(-300, -250, 1009)
    cases["tiny_fp64"] = (noisy(r, 1e-6, floor=0.0), r)
    # Non-finite values: all NaN on one side; mixed NaN/inf on both sides, some at shared positions.
    r = rng.standard_normal(517).astype(np.float32)
    cases["all_nan_candidate"] = (np.full_like(r, np.nan), r)
    cases["all_nan_both"] = (np.full_like(r, np.nan), np.full_like(r, np.nan))
    r = rng.standard_normal(4099).astype(np.float32)
    c = noisy(r, 1e-3)
    specials = np.array([np.nan, np.inf, -np.inf], dtype=np.float32)
    for index in rng.choice(r.size, 60, replace=False):
        c[index] = rng.choice(specials)
    for index in rng.choice(r.size, 60, replace=False):
        r[index] = rng.choice(specials)
    shared = rng.choice(r.size, 20, replace=False)
    r[shared] = c[shared] = rng.choice(specials, 20)
    c[shared[:5]] = np.inf
    r[shared[:5]] = -np.inf  # opposite infinities: a mismatch
    cases["mixed_non_finite"] = (c, r)
    # Zero references and empty / rank-0 arrays.
    r = np.zeros(300, dtype=np.float32)
    cases["zero_reference"] = (rng.standard_normal(300).astype(np.float32), r)
    cases["zero_both"] = (np.zeros(300, dtype=np.float32), r)
    cases["empty"] = (np.zeros((0, 3), dtype=np.float32), np.zeros((0, 3), dtype=np.float32))
    cases["scalar"] = (np.array(1.0004, dtype=np.float32), np.array(1.0, dtype=np.float32))
    r = rng.standard_normal(257).astype(np.float32)
    cases["identical"] = (r.copy(), r)
    cases["negated"] = (-r, r)
    # Integer and bool outputs, and mixed dtypes (all compared in fp64).
    r = rng.integers(-1000, 1000, 1031).astype(np.int32)
    c = r.copy()
    c[rng.choice(r.size, 30, replace=False)] += 1
    cases["int32"] = (c, r)
    r = rng.integers(2**60, 2**62, 301, dtype=np.int64)
    cases["int64_large"] = (r + rng.integers(-3000, 3000, 301), r)
    r = rng.integers(0, 256, 509).astype(np.uint8)
    cases["uint8"] = (np.clip(r.astype(np.int32) + rng.integers(-1, 2, 509), 0, 255).astype(np.uint8), r)
    r = rng.integers(0, 2, 211).astype(np.bool_)
    c = r.copy()
    c[:7] = ~c[:7]
    cases["bool"] = (c, r)
    r = rng.standard_normal(1001).astype(np.float32)
    cases["fp16_vs_fp32"] = (r.astype(np.float16), r)
    cases["fp32_vs_fp64"] = (r, noisy(r, 1e-5, np.float64))
    cases["int8_vs_fp32"] = (np.clip(np.round(r * 40), -128, 127).astype(np.int8), r * 40)
    return cases


def narrow_cases():
    cases = {}
    r = rng.standard_normal(1023).astype(np.float32)
    cases["bf16_vs_fp32"] = (r.astype(ml_dtypes.bfloat16), r)
    r8 = (rng.standard_normal(777) * 50).astype(np.float32)
    c8 = r8.astype(ml_dtypes.float8_e4m3fn)
    c8[:3] = np.nan  # e4m3fn has NaN but no infinity
    cases["fp8e4m3_vs_fp32"] = (c8, r8)
    r16 = (rng.standard_normal(555) * 1000).astype(np.float16)
    c5 = r16.astype(ml_dtypes.float8_e5m2)
    c5[:2] = np.inf
    c5[2] = -np.inf
    cases["fp8e5m2_vs_fp16"] = (c5, r16)
    return cases


def as_json_number(x):
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def expected_metrics(candidate, reference, atol=ATOL, rtol=RTOL):
    """Every metric of docs/compare.md for one pair (tests/python/test_compare.py uses it too)."""
    c = np.asarray(candidate).astype(np.float64)
    r = np.asarray(reference).astype(np.float64)
    out = {"shape": list(c.shape), "element_count": int(c.size)}
    for side, x in (("candidate", c), ("reference", r)):
        out[f"{side}_nan"] = int(np.isnan(x).sum())
        out[f"{side}_posinf"] = int(np.isposinf(x).sum())
        out[f"{side}_neginf"] = int(np.isneginf(x).sum())
    finite = np.isfinite(c) & np.isfinite(r)
    cf, rf = c[finite], r[finite]
    out["finite_pair_count"] = int(finite.sum())

    # Norms and dot products on values scaled by a power of two: exact, and free of overflow.
    largest = max(np.abs(cf).max(initial=0.0), np.abs(rf).max(initial=0.0))
    exponent = math.frexp(largest)[1] if largest > 0 else 0
    cs, rs = np.ldexp(cf, -exponent), np.ldexp(rf, -exponent)
    ds = cs - rs
    norm_d, norm_r, norm_c = np.linalg.norm(ds), np.linalg.norm(rs), np.linalg.norm(cs)
    out["max_abs_error"] = float(np.abs(cf - rf).max(initial=0.0))
    out["rel_l2_error"] = (0.0 if norm_d == 0 else math.inf) if norm_r == 0 else float(norm_d / norm_r)
    if norm_c == 0 and norm_r == 0:
        out["cosine_similarity"] = 1.0
    elif norm_c == 0 or norm_r == 0:
        out["cosine_similarity"] = 0.0
    else:
        out["cosine_similarity"] = float(np.dot(cs, rs) / (norm_c * norm_r))

    outside = ~np.isclose(c, r, rtol=rtol, atol=atol, equal_nan=True)
    out["outside_tolerance_count"] = int(outside.sum())
    out["outside_tolerance_fraction"] = float(outside.sum() / c.size) if c.size else 0.0
    # Worst element: largest |c-r| - (atol + rtol*|r|); a non-finite mismatch counts as +inf;
    # matching non-finite positions cannot be worst. argmax returns the first maximum.
    with np.errstate(invalid="ignore", over="ignore"):
        excess = np.abs(c - r) - (atol + rtol * np.abs(r))
    excess = np.where(finite, excess, np.where(outside, math.inf, np.nan)).ravel()
    candidates = ~np.isnan(excess)
    if candidates.any():
        flat = int(np.argmax(np.where(candidates, excess, -math.inf)))
        out["worst_index"] = [int(i) for i in np.unravel_index(flat, c.shape)] if c.ndim else []
        out["worst_candidate"] = float(c.ravel()[flat])
        out["worst_reference"] = float(r.ravel()[flat])
        out["worst_excess"] = float(excess[flat])
    else:
        out["worst_index"] = out["worst_candidate"] = out["worst_reference"] = out["worst_excess"] = None

    # PSNR and SNR from the norms, so that they stay finite where the squares would not.
    n = cf.size
    peak = np.abs(rf).max(initial=0.0)
    with np.errstate(over="ignore"):
        out["mse"] = float(np.ldexp(norm_d, exponent) ** 2 / n) if n else 0.0
    if norm_d == 0:
        out["psnr"] = out["snr"] = math.inf
    else:
        log_norm_d = math.log10(norm_d) + exponent * math.log10(2.0)
        out["psnr"] = -math.inf if peak == 0 else 20 * (math.log10(peak) - log_norm_d + 0.5 * math.log10(n))
        out["snr"] = -math.inf if norm_r == 0 else 20 * math.log10(norm_r / norm_d)
    return {key: (as_json_number(v) if isinstance(v, float) else v) for key, v in out.items()}


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    standard, narrow = standard_cases(), narrow_cases()
    np.savez_compressed(OUT / "candidate.npz", **{name: c for name, (c, _) in standard.items()})
    np.savez_compressed(OUT / "reference.npz", **{name: r for name, (_, r) in standard.items()})
    safetensors.numpy.save_file({n: np.ascontiguousarray(c) for n, (c, _) in narrow.items()},
                                str(OUT / "narrow.candidate.safetensors"))
    safetensors.numpy.save_file({n: np.ascontiguousarray(r) for n, (_, r) in narrow.items()},
                                str(OUT / "narrow.reference.safetensors"))
    c, r = standard["random_fp32_rank3"]
    np.save(OUT / "single_candidate.npy", c)
    np.save(OUT / "single_reference.npy", r)

    expected = {"atol": ATOL, "rtol": RTOL,
                "cases": {name: expected_metrics(c, r) for name, (c, r) in {**standard, **narrow}.items()}}
    (OUT / "expected.json").write_text(json.dumps(expected, indent=1, allow_nan=False) + "\n")
    total = sum(p.stat().st_size for p in OUT.iterdir())
    print(f"wrote {len(expected['cases'])} cases to {OUT} ({total} bytes)")


if __name__ == "__main__":
    main()
