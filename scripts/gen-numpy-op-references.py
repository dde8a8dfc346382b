#!/usr/bin/env python3
"""NumPy references for pointwise functions whose edge cases NumPy defines exactly
(the NumpyReference tests of tests/host/ops/op_reference_test.cpp): sign, mod (numpy.mod) and fmod (numpy.fmod) on
negative operands, zero divisors, zeros of both signs, infinities and NaN, in float32 and in
int8/int32/int64.

It writes tests/fixtures/ops_numpy/pointwise.safetensors in the layout of
scripts/gen-op-references.py: per case the inputs "<case>.in.<name>" and NumPy's result
"<case>.out.y" in the layer's output type, and in the metadata "cases" a JSON list describing
each case's layer as tensoracle stores it (op kind, attribute map, input names, outputs);
"command" records how the file was made. The test compares bit for bit (NaN to NaN, and the sign
of zeros), so a value NumPy computes in float32 must be exact in float32: the operands are small
integers and halves, plus seeded values whose remainders stay exact.

Run from the repository root with NumPy and safetensors installed (scripts/setup's .venv):
    .venv/bin/python scripts/gen-numpy-op-references.py --out tests/fixtures/ops_numpy
"""
import argparse
import json
import os
import sys

import numpy as np
from safetensors.numpy import save_file

INF = np.inf
NAN = np.nan

# Float operand pairs: signs of both, zero divisors, zeros of both signs, infinities, NaN, a
# large dividend and halves.
FLOAT_A = [5, -5, 5, -5, 4, -4, 4, -4, 0, -0.0, 0, -0.0, 7.5, -7.5, 7.5, -7.5, NAN, 3, INF, -INF, INF,
           5, -5, 5, -5, 5, 1e30, -1e30, 2.5, 0, 1, -1]
FLOAT_B = [3, 3, -3, -3, 2, 2, -2, -2, 3, 3, -3, -3, 2, 2, -2, -2, 3, NAN, 3, 3, INF,
           0, 0, -0.0, INF, -INF, 3, 3, -0.0, 0, INF, -INF]
SIGN_X = [-0.0, 0, NAN, INF, -INF, 1e-45, -1e-45, -3, 2, 0.5, -0.5, 3.4e38, -3.4e38]


def extremes(dtype):
    """The type's limits; for int64 +-2^53, the range the CPU reference holds exactly (fp64)."""
    if dtype == np.int64:
        return -(2**53), 2**53
    info = np.iinfo(dtype)
    return info.min, info.max


class Fixture:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.cases = []
        self.tensors = {}

    def add(self, name, op, attrs, inputs, result):
        assert name not in {c["name"] for c in self.cases}, name
        for tensor_name, value in inputs:
            self.tensors[f"{name}.in.{tensor_name}"] = np.ascontiguousarray(value)
        self.tensors[f"{name}.out.y"] = np.ascontiguousarray(result)
        self.cases.append({"name": name, "op": op, "attrs": attrs, "inputs": [n for n, _ in inputs], "outputs": ["y"]})

    def seeded_halves(self, n):
        """Multiples of 0.5 in [-50, 50]: float32 remainders of them are exact."""
        return (self.rng.integers(-100, 101, size=n) / 2.0).astype(np.float32)


def build(fixture):
    with np.errstate(all="ignore"):
        a = np.array(FLOAT_A, dtype=np.float32)
        b = np.array(FLOAT_B, dtype=np.float32)
        # Seeded halves, divisors kept away from zero (the zero divisors are above).
        sa = fixture.seeded_halves(64)
        sb = fixture.seeded_halves(64)
        sb[sb == 0] = 1.5
        for op, fn in (("mod", np.mod), ("fmod", np.fmod)):
            fixture.add(f"{op}_fp32_edges", "elementwise", {"op": op}, [("a", a), ("b", b)], fn(a, b))
            fixture.add(f"{op}_fp32_seeded", "elementwise", {"op": op}, [("a", sa), ("b", sb)], fn(sa, sb))
            # Broadcasting: a [4, 1] column against a [3] row.
            col = np.array([[7.5], [-7.5], [0.0], [-0.0]], dtype=np.float32)
            row = np.array([2, -2, INF], dtype=np.float32)
            fixture.add(f"{op}_fp32_broadcast", "elementwise", {"op": op}, [("a", col), ("b", row)], fn(col, row))
            for dtype in (np.int8, np.int32, np.int64):
                low, high = extremes(dtype)
                ia = np.array([7, -7, 7, -7, 6, -6, 0, 5, -5, low, low, high, high, 3, -3, 0], dtype=dtype)
                ib = np.array([3, 3, -3, -3, 3, 3, 4, 0, 0, -1, 7, -1, 7, high, low, 0], dtype=dtype)
                name = f"{op}_{np.dtype(dtype).name}"
                fixture.add(name, "elementwise", {"op": op}, [("a", ia), ("b", ib)], fn(ia, ib))
        x = np.array(SIGN_X, dtype=np.float32)
        fixture.add("sign_fp32", "unary", {"op": "sign"}, [("x", x)], np.sign(x))
        for dtype in (np.int8, np.int32, np.int64):
            low, high = extremes(dtype)
            ix = np.array([low, -5, -1, 0, 1, 9, high], dtype=dtype)
            fixture.add(f"sign_{np.dtype(dtype).name}", "unary", {"op": "sign"}, [("x", ix)], np.sign(ix))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="tests/fixtures/ops_numpy", help="output directory")
    parser.add_argument("--seed", type=int, default=20261203)
    args = parser.parse_args()
    fixture = Fixture(args.seed)
    build(fixture)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "pointwise.safetensors")
    command = "scripts/gen-numpy-op-references.py " + " ".join(sys.argv[1:])
    metadata = {"cases": json.dumps(fixture.cases), "command": command.strip(), "numpy": np.__version__}
    save_file(fixture.tensors, path, metadata=metadata)
    print(f"wrote {path}: {len(fixture.cases)} cases")


if __name__ == "__main__":
    main()
