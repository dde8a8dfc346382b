#!/usr/bin/env python3
"""Fits P(t) in erfc(z) ~= t * exp(P(t) - z^2), t = 1 / (1 + z/2): the polynomial of
src/backends/cuda/kernels/gelu_erf.cuh. Least squares on Chebyshev nodes of t over z in [0, 10],
against mpmath's erfc at 30 digits; prints the coefficients (lowest degree first) and the
formula's relative error per range of z, evaluated in float32 as the kernel does.

    python3 scripts/fits/erfc_fit.py [degree]      (needs numpy and mpmath; degree 7 is in use)
"""
import sys

import mpmath
import numpy as np

mpmath.mp.dps = 30


def fit(degree, z_max=10.0, nodes=4000):
    t_min = 1 / (1 + z_max / 2)
    k = np.arange(nodes)
    ts = (t_min + 1) / 2 + (1 - t_min) / 2 * np.cos(np.pi * (k + 0.5) / nodes)
    zs = 2 * (1 / ts - 1)
    target = [float(mpmath.log(mpmath.erfc(z) / t) + mpmath.mpf(z) ** 2) for z, t in zip(zs, ts)]
    return np.polynomial.polynomial.polyfit(ts, target, degree).astype(np.float32)


def relative_errors(coef, z_max=9.5, points=10001):
    z = np.linspace(0, z_max, points).astype(np.float32)
    t = (np.float32(1) / (np.float32(1) + np.float32(0.5) * z)).astype(np.float32)
    p = np.float32(coef[-1])
    for c in coef[-2::-1]:  # Horner with fused multiply-adds: one rounding a step
        p = (p.astype(np.float64) * t + c).astype(np.float32)
    arg = (p.astype(np.float64) - z.astype(np.float64) * z).astype(np.float32)
    value = (t * np.exp(arg.astype(np.float64)).astype(np.float32)).astype(np.float32)
    exact = np.array([float(mpmath.erfc(float(v))) for v in z])
    return z, np.abs(value - exact) / exact


def main():
    degree = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    coef = fit(degree)
    print("P, lowest degree first:", ", ".join(f"{c:.9g}f" for c in coef))
    z, rel = relative_errors(coef)
    for lo, hi in [(0, 1), (1, 3), (3, 5), (5, 7), (7, 9.5)]:
        inside = (z >= lo) & (z < hi)
        print(f"z in [{lo}, {hi}): max relative error {rel[inside].max():.3g}")


if __name__ == "__main__":
    main()
