#!/usr/bin/env python3
"""PyTorch references for the CPU backend's op tests (tests/host/ops/op_reference_test.cpp).

For every layer family it writes tests/fixtures/ops/<family>.safetensors holding, per case, the
seeded inputs ("<case>.in.<name>", in the type the layer receives) and torch's outputs
("<case>.out.<name>": fp64 for floating outputs, computed in fp64 from the stored inputs; the
exact type for integer, bool and fp8 outputs). The metadata "cases" is a JSON list describing
each case's layer exactly as tensoracle stores it (op kind, attribute map, input names, outputs,
tolerances), "command" records how the file was made.

Run from the repository root where torch is installed (CPU is enough; fp64 math):
    python3 scripts/gen-op-references.py --out tests/fixtures/ops
"""
import argparse
import json
import math
import os
import sys

import torch
import torch.nn.functional as F
from safetensors.torch import save_file

F32 = torch.float32
F64 = torch.float64


class Family:
    """The cases of one fixture file."""

    def __init__(self, name, seed):
        self.name = name
        self.gen = torch.Generator().manual_seed(seed)
        self.cases = []
        self.tensors = {}

    def rand(self, *shape, lo=-1.0, hi=1.0, dtype=F32):
        x = torch.rand(shape, generator=self.gen, dtype=F64) * (hi - lo) + lo
        return x.to(dtype)

    def randint(self, lo, hi, *shape, dtype=torch.int64):
        return torch.randint(lo, hi, shape, generator=self.gen).to(dtype)

    def add(self, name, op, inputs, attrs, outputs, atol=1e-6, rtol=1e-6):
        """inputs: list of (name, tensor) or None (an omitted optional input);
        outputs: dict name -> torch result (floating results are stored as fp64)."""
        assert name not in {c["name"] for c in self.cases}, name
        names = []
        for item in inputs:
            if item is None:
                names.append(None)
                continue
            tensor_name, tensor = item
            self.tensors[f"{name}.in.{tensor_name}"] = tensor.contiguous().clone()
            names.append(tensor_name)
        for out_name, value in outputs.items():
            if value.dtype in (torch.float16, torch.bfloat16, F32, F64):
                value = value.to(F64)
            self.tensors[f"{name}.out.{out_name}"] = value.contiguous().clone()
        self.cases.append({"name": name, "op": op, "inputs": names, "attrs": attrs,
                           "outputs": list(outputs), "atol": atol, "rtol": rtol})

    def save(self, out_dir, command):
        meta = {"cases": json.dumps(self.cases), "command": command, "torch": torch.__version__}
        path = os.path.join(out_dir, f"{self.name}.safetensors")
        save_file(self.tensors, path, metadata=meta)
        return path, len(self.cases)


def d(t):
    """The fp64 view of a stored input, which the reference computes with."""
    return t.to(F64)


# Tolerances: fp32 outputs are the fp64 result rounded once (half an ulp, 6e-8 relative);
# narrow types are compared with their own rounding.
TOL16 = dict(atol=1e-3, rtol=1e-3)
TOLBF16 = dict(atol=8e-3, rtol=8e-3)


def conv_attrs(n, stride, pre, post, dilation, groups):
    return {"stride": list(stride), "dilation": list(dilation), "pre_padding": list(pre),
            "post_padding": list(post), "groups": groups}


def convolution(fam):
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
    cases = [
        # name, x, w, stride, pre, post, dilation, groups, bias
        ("c2d_3x3_same", (1, 3, 9, 8), (4, 3, 3, 3), (1, 1), (1, 1), (1, 1), (1, 1), 1, True),
        ("c2d_stride2_odd", (2, 4, 11, 10), (6, 4, 3, 3), (2, 2), (1, 1), (1, 1), (1, 1), 1, True),
        ("c2d_groups2_dil2", (2, 4, 10, 11), (6, 2, 3, 2), (2, 1), (0, 1), (0, 1), (1, 2), 2, True),
        ("c2d_depthwise", (1, 6, 7, 7), (6, 1, 3, 3), (1, 1), (2, 2), (2, 2), (2, 2), 6, False),
        ("c2d_pointwise", (1, 8, 5, 5), (4, 8, 1, 1), (1, 1), (0, 0), (0, 0), (1, 1), 1, True),
        ("c2d_7x7_s2_p3", (1, 3, 17, 15), (5, 3, 7, 7), (2, 2), (3, 3), (3, 3), (1, 1), 1, True),
        ("c2d_asym_pad", (1, 2, 6, 7), (3, 2, 3, 3), (1, 2), (0, 2), (1, 0), (1, 1), 1, False),
        ("c2d_kernel_stride_mix", (1, 3, 8, 9), (4, 3, 2, 4), (3, 2), (1, 0), (0, 2), (2, 1), 1, True),
        ("c1d", (2, 3, 13), (5, 3, 4), (3,), (2,), (2,), (1,), 1, True),
        ("c1d_groups3_dil3", (1, 6, 20), (9, 2, 3), (1,), (0,), (1,), (3,), 3, True),
        ("c3d", (1, 2, 5, 6, 7), (3, 2, 2, 3, 3), (1, 2, 1), (1, 0, 1), (1, 0, 1), (1, 1, 2), 1, True),
    ]
    for name, xs, ws, stride, pre, post, dil, groups, bias in cases:
        n = len(xs) - 2
        x, w = fam.rand(*xs), fam.rand(*ws)
        b = fam.rand(ws[0]) if bias else None
        pads = []
        for i in reversed(range(n)):
            pads += [pre[i], post[i]]
        ref = conv[n](F.pad(d(x), pads), d(w), None if b is None else d(b), stride=stride, dilation=dil, groups=groups)
        fam.add(name, "convolution", [("x", x), ("w", w), ("b", b) if bias else None],
                conv_attrs(n, stride, pre, post, dil, groups), {"y": ref})
    # fp16 and bf16 storage: the reference is computed in fp64 from the rounded inputs.
    for dtype, tol, tag in ((torch.float16, TOL16, "fp16"), (torch.bfloat16, TOLBF16, "bf16")):
        x, w, b = fam.rand(1, 4, 6, 6, dtype=dtype), fam.rand(5, 4, 3, 3, dtype=dtype), fam.rand(5, dtype=dtype)
        ref = F.conv2d(d(x), d(w), d(b), padding=1)
        fam.add(f"c2d_{tag}", "convolution", [("x", x), ("w", w), ("b", b)],
                conv_attrs(2, (1, 1), (1, 1), (1, 1), (1, 1), 1), {"y": ref}, **tol)


def deconvolution(fam):
    cases = [
        # name, x, w, stride, pad, output_padding, dilation, groups, bias
        ("d2d_s2_p1_op1", (1, 4, 5, 4), (4, 3, 3, 3), (2, 2), (1, 1), (1, 1), (1, 1), 1, True),
        ("d2d_groups2", (2, 4, 4, 5), (4, 2, 2, 3), (1, 3), (0, 1), (0, 2), (2, 1), 2, False),
        ("d2d_k4_s2", (1, 3, 6, 6), (3, 2, 4, 4), (2, 2), (1, 1), (0, 0), (1, 1), 1, True),
        ("d2d_dilated", (1, 2, 5, 5), (2, 3, 3, 3), (1, 1), (2, 2), (0, 0), (2, 2), 1, True),
    ]
    for name, xs, ws, stride, pad, opad, dil, groups, bias in cases:
        x, w = fam.rand(*xs), fam.rand(*ws)
        b = fam.rand(ws[1] * groups) if bias else None
        ref = F.conv_transpose2d(d(x), d(w), None if b is None else d(b), stride=stride, padding=pad,
                                 output_padding=opad, groups=groups, dilation=dil)
        attrs = {"stride": list(stride), "dilation": list(dil), "pre_padding": list(pad), "post_padding": list(pad),
                 "output_padding": list(opad), "groups": groups}
        fam.add(name, "deconvolution", [("x", x), ("w", w), ("b", b) if bias else None], attrs, {"y": ref})


def matmul(fam):
    cases = [((5, 7), (7, 3), False, False), ((2, 3, 4, 5), (5, 6), False, False),
             ((3, 1, 5, 4), (2, 6, 5), True, True), ((7,), (2, 7, 3), False, False),
             ((4, 7), (7,), False, False), ((2, 6, 3), (2, 6, 4), True, False), ((1, 33), (33, 65), False, False),
             ((2, 4, 9), (1, 5, 9), False, True)]
    for i, (sa, sb, ta, tb) in enumerate(cases):
        a, b = fam.rand(*sa), fam.rand(*sb)
        A, B = d(a), d(b)
        if ta and A.dim() > 1:
            A = A.transpose(-1, -2)
        if tb and B.dim() > 1:
            B = B.transpose(-1, -2)
        fam.add(f"mm{i}_{'x'.join(map(str, sa))}_{'x'.join(map(str, sb))}", "matmul", [("a", a), ("b", b)],
                {"transpose_a": ta, "transpose_b": tb}, {"y": torch.matmul(A, B)})
    a, b = fam.rand(3, 8, dtype=torch.float16), fam.rand(8, 5, dtype=torch.float16)
    fam.add("mm_fp16", "matmul", [("a", a), ("b", b)], {"transpose_a": False, "transpose_b": False},
            {"y": d(a) @ d(b)}, **TOL16)


def elementwise(fam):
    ops = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div, "max": torch.maximum,
           "min": torch.minimum, "less": torch.lt, "greater": torch.gt, "less_equal": torch.le,
           "greater_equal": torch.ge}
    shapes = [((2, 1, 4), (3, 1)), ((5,), (5,)), ((3, 4, 1, 2), (4, 3, 1)), ((1,), (2, 3))]
    for op, fn in ops.items():
        for i, (sa, sb) in enumerate(shapes):
            a, b = fam.rand(*sa), fam.rand(*sb)
            if op == "div":
                b = torch.where(b.abs() < 0.1, torch.full_like(b, 0.5), b)
            fam.add(f"{op}_{i}", "elementwise", [("a", a), ("b", b)], {"op": op}, {"y": fn(d(a), d(b))})
    a, b = fam.rand(3, 4, lo=0.1, hi=2.0), fam.rand(4, lo=-2.0, hi=2.0)
    fam.add("pow", "elementwise", [("a", a), ("b", b)], {"op": "pow"}, {"y": torch.pow(d(a), d(b))})
    a, b = fam.randint(0, 4, 6, 1, 4, dtype=torch.int32), fam.randint(0, 4, 8, 1, dtype=torch.int32)
    fam.add("equal_int32", "elementwise", [("a", a), ("b", b)], {"op": "equal"}, {"y": torch.eq(a, b)})
    a, b = fam.randint(-50, 50, 16, dtype=torch.int32), fam.randint(1, 7, 16, dtype=torch.int32)
    b = b * (1 - 2 * fam.randint(0, 2, 16, dtype=torch.int32))
    fam.add("div_int32_truncates", "elementwise", [("a", a), ("b", b)], {"op": "div"},
            {"y": torch.div(a, b, rounding_mode="trunc")})
    for op, fn in (("and", torch.logical_and), ("or", torch.logical_or)):
        a, b = fam.randint(0, 2, 4, 3, dtype=torch.bool), fam.randint(0, 2, 3, dtype=torch.bool)
        fam.add(f"{op}_bool", "elementwise", [("a", a), ("b", b)], {"op": op}, {"y": fn(a, b)})
    a, b = fam.rand(3, 5, dtype=torch.float16), fam.rand(5, dtype=torch.float16)
    fam.add("add_fp16", "elementwise", [("a", a), ("b", b)], {"op": "add"}, {"y": d(a) + d(b)}, **TOL16)


def unary(fam):
    fns = {"exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "recip": torch.reciprocal,
           "abs": torch.abs, "neg": torch.neg, "sin": torch.sin, "cos": torch.cos, "erf": torch.erf,
           "floor": torch.floor, "ceil": torch.ceil, "round": torch.round}
    for op, fn in fns.items():
        lo, hi = (0.05, 3.0) if op in ("log", "sqrt", "rsqrt") else (-4.0, 4.0)
        x = fam.rand(4, 6, lo=lo, hi=hi)
        if op == "round":  # exact halves must round to even
            x = torch.cat([x.flatten(), torch.tensor([0.5, 1.5, 2.5, -0.5, -2.5], dtype=F32)])
        if op == "recip":
            x = torch.where(x.abs() < 0.1, torch.full_like(x, 0.25), x)
        fam.add(op, "unary", [("x", x)], {"op": op}, {"y": fn(d(x))})
    x = fam.randint(-100, 100, 9, dtype=torch.int32)
    fam.add("abs_int32", "unary", [("x", x)], {"op": "abs"}, {"y": torch.abs(x)})


def activation(fam):
    def act(kind, alpha=0.0, beta=0.0):
        return {"kind": kind, "alpha": float(alpha), "beta": float(beta)}

    x = fam.rand(5, 7, lo=-6.0, hi=6.0)
    X = d(x)
    cases = [
        ("relu", act("relu"), F.relu(X)),
        ("leaky_relu", act("leaky_relu", 0.01), F.leaky_relu(X, 0.01)),
        ("leaky_relu_0_2", act("leaky_relu", 0.2), F.leaky_relu(X, 0.2)),
        ("sigmoid", act("sigmoid"), torch.sigmoid(X)),
        ("tanh", act("tanh"), torch.tanh(X)),
        ("gelu_erf", act("gelu_erf"), F.gelu(X)),
        ("gelu_tanh", act("gelu_tanh"), F.gelu(X, approximate="tanh")),
        ("silu", act("silu"), F.silu(X)),
        ("softplus", act("softplus", 1.0), F.softplus(X)),
        ("softplus_beta2", act("softplus", 2.0), F.softplus(X, beta=2.0)),
        ("clip_relu6", act("clip", 0.0, 6.0), torch.clamp(X, 0.0, 6.0)),
        ("clip_custom", act("clip", -0.25, 0.5), torch.clamp(X, -0.25, 0.5)),
        ("hard_sigmoid", act("hard_sigmoid", 1.0 / 6.0, 0.5), F.hardsigmoid(X)),
        ("hard_swish", act("hard_swish", 1.0 / 6.0, 0.5), F.hardswish(X)),
    ]
    for name, attrs, ref in cases:
        fam.add(name, "activation", [("x", x)], attrs, {"y": ref})
    xb = fam.rand(9, lo=-3.0, hi=3.0, dtype=torch.bfloat16)
    fam.add("gelu_bf16", "activation", [("x", xb)], act("gelu_erf"), {"y": F.gelu(d(xb))}, **TOLBF16)


def softmax_reduce(fam):
    for axis in (0, 1, -1):
        x = fam.rand(3, 4, 5, lo=-4.0, hi=4.0)
        fam.add(f"softmax_axis{axis}", "softmax", [("x", x)], {"axis": axis}, {"y": torch.softmax(d(x), axis)})
    x = fam.rand(2, 7, lo=-4.0, hi=4.0, dtype=torch.float16)
    fam.add("softmax_fp16", "softmax", [("x", x)], {"axis": -1}, {"y": torch.softmax(d(x), -1)}, **TOL16)

    def prod(t, dims, keep):
        for dim in sorted(dims, reverse=True):
            t = torch.prod(t, dim=dim, keepdim=keep)
        return t

    fns = {"sum": lambda t, a, k: torch.sum(t, a, keepdim=k), "mean": lambda t, a, k: torch.mean(t, a, keepdim=k),
           "max": lambda t, a, k: torch.amax(t, a, keepdim=k), "min": lambda t, a, k: torch.amin(t, a, keepdim=k),
           "prod": prod}
    for op, fn in fns.items():
        for axes in ([0, -1], [1], []):
            for keep in (False, True):
                x = fam.rand(3, 4, 5, lo=0.5, hi=1.5) if op == "prod" else fam.rand(3, 4, 5)
                rank = 3
                norm = sorted(a % rank for a in axes) if axes else list(range(rank))
                ref = fn(d(x), norm, keep)
                tag = "all" if not axes else "_".join(str(a) for a in axes).replace("-", "m")
                fam.add(f"{op}_{tag}_keep{int(keep)}", "reduce", [("x", x)],
                        {"op": op, "axes": axes, "keep_dims": keep}, {"y": ref})
    for largest in (True, False):
        x = fam.rand(4, 9)
        v, i = torch.topk(d(x), 3, dim=-1, largest=largest, sorted=True)
        fam.add(f"top_k_last_largest{int(largest)}", "top_k", [("x", x)], {"k": 3, "axis": -1, "largest": largest},
                {"values": v, "indices": i})
    x = fam.rand(6, 3, 2)
    v, i = torch.topk(d(x), 2, dim=0)
    fam.add("top_k_axis0", "top_k", [("x", x)], {"k": 2, "axis": 0, "largest": True}, {"values": v, "indices": i})


def normalization(fam):
    x, w, b = fam.rand(2, 3, 8), fam.rand(8), fam.rand(8)
    fam.add("layer_norm_last", "layer_norm", [("x", x), ("w", w), ("b", b)], {"axis": -1, "epsilon": 1e-5},
            {"y": F.layer_norm(d(x), (8,), d(w), d(b), 1e-5)})
    x = fam.rand(2, 3, 4, 5)
    fam.add("layer_norm_axis1_plain", "layer_norm", [("x", x)], {"axis": 1, "epsilon": 1e-3},
            {"y": F.layer_norm(d(x), (3, 4, 5), None, None, 1e-3)})
    x, w = fam.rand(4, 16), fam.rand(16)
    fam.add("rms_norm", "rms_norm", [("x", x), ("w", w)], {"axis": -1, "epsilon": 1e-6},
            {"y": F.rms_norm(d(x), (16,), d(w), 1e-6)})
    x, w, b = fam.rand(2, 6, 3, 3), fam.rand(6), fam.rand(6)
    for groups in (1, 2, 3, 6):
        fam.add(f"group_norm_g{groups}", "group_norm", [("x", x), ("w", w), ("b", b)],
                {"groups": groups, "epsilon": 1e-5}, {"y": F.group_norm(d(x), groups, d(w), d(b), 1e-5)})
    x, w, b = fam.rand(2, 3, 5), fam.rand(3), fam.rand(3)
    fam.add("instance_norm_1d", "instance_norm", [("x", x), ("w", w), ("b", b)], {"epsilon": 1e-5},
            {"y": F.instance_norm(d(x), weight=d(w), bias=d(b), eps=1e-5)})
    x = fam.rand(1, 2, 4, 4)
    fam.add("instance_norm_2d_plain", "instance_norm", [("x", x)], {"epsilon": 1e-5},
            {"y": F.instance_norm(d(x), eps=1e-5)})
    x, w, b, m, v = fam.rand(2, 3, 4, 4), fam.rand(3), fam.rand(3), fam.rand(3), fam.rand(3, lo=0.5, hi=2.0)
    fam.add("batch_norm", "batch_norm", [("x", x), ("w", w), ("b", b), ("mean", m), ("var", v)], {"epsilon": 1e-5},
            {"y": F.batch_norm(d(x), d(m), d(v), d(w), d(b), training=False, eps=1e-5)})


def pooling(fam):
    def attrs(kind, window, stride, pad, include_pad=True, ceil_mode=False, is_global=False):
        return {"kind": kind, "window": list(window), "stride": list(stride), "pre_padding": list(pad),
                "post_padding": list(pad), "count_include_pad": include_pad, "ceil_mode": ceil_mode,
                "global": is_global}

    for ceil_mode in (False, True):
        for k, s, p in (((3, 3), (2, 2), (1, 1)), ((2, 3), (2, 1), (0, 1)), ((3, 2), (3, 2), (1, 0))):
            x = fam.rand(1, 2, 8, 9)
            tag = f"k{k[0]}{k[1]}_s{s[0]}{s[1]}_p{p[0]}{p[1]}_ceil{int(ceil_mode)}"
            fam.add(f"max_{tag}", "pooling", [("x", x)], attrs("max", k, s, p, True, ceil_mode),
                    {"y": F.max_pool2d(d(x), k, s, p, ceil_mode=ceil_mode)})
            for include in (False, True):
                fam.add(f"avg_{tag}_inc{int(include)}", "pooling", [("x", x)], attrs("average", k, s, p, include, ceil_mode),
                        {"y": F.avg_pool2d(d(x), k, s, p, ceil_mode=ceil_mode, count_include_pad=include)})
    x = fam.rand(2, 3, 11)
    fam.add("max_1d", "pooling", [("x", x)], attrs("max", (4,), (3,), (1,)), {"y": F.max_pool1d(d(x), 4, 3, 1)})
    x = fam.rand(1, 2, 5, 6, 7)
    fam.add("avg_3d", "pooling", [("x", x)], attrs("average", (2, 3, 2), (2, 2, 1), (1, 1, 0), False),
            {"y": F.avg_pool3d(d(x), (2, 3, 2), (2, 2, 1), (1, 1, 0), count_include_pad=False)})
    x = fam.rand(2, 3, 5, 4)
    g = attrs("average", (), (), (), True, False, True)
    fam.add("global_avg", "pooling", [("x", x)], g, {"y": F.adaptive_avg_pool2d(d(x), 1)})
    g = dict(g, kind="max")
    fam.add("global_max", "pooling", [("x", x)], g, {"y": F.adaptive_max_pool2d(d(x), 1)})


def resize(fam):
    modes = [("nearest", "asymmetric", dict(mode="nearest")),
             ("nearest", "half_pixel", dict(mode="nearest-exact")),
             ("linear", "half_pixel", dict(mode="bilinear", align_corners=False)),
             ("linear", "align_corners", dict(mode="bilinear", align_corners=True))]
    for mode, coords, kw in modes:
        for size in ((8, 9), (3, 2), (5, 4), (10, 7)):
            x = fam.rand(1, 2, 5, 4)
            fam.add(f"{mode}_{coords}_to_{size[0]}x{size[1]}", "resize", [("x", x)],
                    {"mode": mode, "coordinates": coords, "output_size": list(size), "scales": []},
                    {"y": F.interpolate(d(x), size=size, **kw)})
        for scale in ((2.0, 2.0), (1.5, 0.5)):
            x = fam.rand(1, 2, 6, 4)
            fam.add(f"{mode}_{coords}_scale_{scale[0]}_{scale[1]}".replace(".", "p"), "resize", [("x", x)],
                    {"mode": mode, "coordinates": coords, "output_size": [], "scales": list(scale)},
                    {"y": F.interpolate(d(x), scale_factor=scale, **kw)})
    x = fam.rand(2, 3, 7)
    fam.add("linear_1d_half_pixel", "resize", [("x", x)],
            {"mode": "linear", "coordinates": "half_pixel", "output_size": [12], "scales": []},
            {"y": F.interpolate(d(x), size=12, mode="linear", align_corners=False)})
    x = fam.rand(1, 1, 3, 4, 5)
    fam.add("trilinear_align", "resize", [("x", x)],
            {"mode": "linear", "coordinates": "align_corners", "output_size": [5, 3, 7], "scales": []},
            {"y": F.interpolate(d(x), size=(5, 3, 7), mode="trilinear", align_corners=True)})


def shuffle(fam):
    x = fam.rand(2, 3, 4)
    fam.add("reshape_0_m1", "reshape", [("x", x)], {"shape": [0, -1]}, {"y": d(x).reshape(2, 12)})
    fam.add("reshape_split", "reshape", [("x", x)], {"shape": [4, -1, 2]}, {"y": d(x).reshape(4, 3, 2)})
    x = fam.rand(2, 3, 4, 5)
    for perm in ((0, 2, 3, 1), (3, 1, 0, 2)):
        fam.add("transpose_" + "".join(map(str, perm)), "transpose", [("x", x)], {"perm": list(perm)},
                {"y": d(x).permute(*perm)})
    parts = [fam.rand(2, 1, 3), fam.rand(2, 4, 3), fam.rand(2, 2, 3)]
    fam.add("concat_axis1", "concat", [(f"in{i}", p) for i, p in enumerate(parts)], {"axis": 1},
            {"y": torch.cat([d(p) for p in parts], 1)})
    parts = [fam.rand(2, 3), fam.rand(2, 5)]
    fam.add("concat_axis_m1", "concat", [(f"in{i}", p) for i, p in enumerate(parts)], {"axis": -1},
            {"y": torch.cat([d(p) for p in parts], -1)})
    x = fam.rand(4, 9, 6)
    for name, start, size, stride in (("slice_plain", (1, 2, 0), (2, 5, 6), (1, 1, 1)),
                                      ("slice_strided_reversed", (3, 1, 5), (2, 4, 3), (-2, 2, -2))):
        ref = d(x)
        for dim in range(3):
            idx = torch.arange(start[dim], start[dim] + size[dim] * stride[dim], stride[dim])[: size[dim]]
            ref = ref.index_select(dim, idx)
        fam.add(name, "slice", [("x", x)], {"start": list(start), "size": list(size), "stride": list(stride)}, {"y": ref})
    for mode in ("constant", "reflect", "replicate", "circular"):
        x = fam.rand(2, 4, 5)
        pre, post = (1, 2), (2, 0)
        pads = [pre[1], post[1], pre[0], post[0]]
        kw = {"value": 0.5} if mode == "constant" else {}
        fam.add(f"pad_{mode}", "pad", [("x", x)], {"pre": list(pre), "post": list(post), "mode": mode, "value": 0.5},
                {"y": F.pad(d(x), pads, mode=mode, **kw)})
    x = fam.rand(2, 3, 6)
    fam.add("pad_reflect_1d_last", "pad", [("x", x)], {"pre": [3], "post": [4], "mode": "reflect", "value": 0.0},
            {"y": F.pad(d(x), [3, 4], mode="reflect")})
    table = fam.rand(10, 4)
    ids = torch.tensor([[4, 0, 9], [-1, 2, 2]], dtype=torch.int64)
    fam.add("gather_embedding", "gather", [("table", table), ("ids", ids)], {"axis": 0},
            {"y": d(table)[ids % 10]})
    x = fam.rand(3, 4, 2)
    ids = torch.tensor([3, 0, -4, 1], dtype=torch.int32)
    fam.add("gather_axis1_int32", "gather", [("x", x), ("ids", ids)], {"axis": 1},
            {"y": d(x).index_select(1, (ids.long() % 4))})
    c, a, b = fam.randint(0, 2, 3, 1, dtype=torch.bool), fam.rand(4), fam.rand(3, 4)
    fam.add("select_broadcast", "select", [("c", c), ("a", a), ("b", b)], {}, {"y": torch.where(c, d(a), d(b))})
    x = fam.rand(17, lo=-4.0, hi=4.0)
    for name, dtype in (("fp16", torch.float16), ("bf16", torch.bfloat16), ("int32", torch.int32),
                        ("bool", torch.bool), ("fp8e4m3", torch.float8_e4m3fn)):
        ref = x.to(dtype)
        if dtype in (torch.float16, torch.bfloat16, torch.float8_e4m3fn):
            ref = ref.to(F64)
        fam.add(f"cast_fp32_to_{name}", "cast", [("x", x)], {"output_type": name}, {"y": ref}, atol=0.0, rtol=0.0)


def grid_sample(fam):
    for mode in ("bilinear", "nearest"):
        for padding in ("zeros", "border"):
            for align in (False, True):
                x = fam.rand(2, 3, 5, 6)
                grid = fam.rand(2, 4, 3, 2, lo=-1.3, hi=1.3)
                fam.add(f"{mode}_{padding}_align{int(align)}", "grid_sample", [("x", x), ("grid", grid)],
                        {"mode": mode, "padding": padding, "align_corners": align},
                        {"y": F.grid_sample(d(x), d(grid), mode=mode, padding_mode=padding, align_corners=align)})


def attention(fam):
    q, k, v = fam.rand(2, 3, 5, 4), fam.rand(2, 3, 6, 4), fam.rand(2, 3, 6, 3)
    fam.add("plain", "attention", [("q", q), ("k", k), ("v", v)], {"causal": False},
            {"y": F.scaled_dot_product_attention(d(q), d(k), d(v))})
    q, k, v = fam.rand(2, 5, 4), fam.rand(2, 5, 4), fam.rand(2, 5, 4)
    fam.add("causal_scale", "attention", [("q", q), ("k", k), ("v", v)], {"causal": True, "scale": 0.3},
            {"y": F.scaled_dot_product_attention(d(q), d(k), d(v), is_causal=True, scale=0.3)})
    q, k, v = fam.rand(2, 6, 4), fam.rand(2, 3, 4), fam.rand(2, 3, 4)
    fam.add("causal_rectangular", "attention", [("q", q), ("k", k), ("v", v)], {"causal": True},
            {"y": F.scaled_dot_product_attention(d(q), d(k), d(v), is_causal=True)})
    q, k, v, m = fam.rand(1, 2, 4, 8), fam.rand(1, 2, 6, 8), fam.rand(1, 2, 6, 8), fam.rand(4, 6, lo=-2.0, hi=0.0)
    fam.add("additive_mask", "attention", [("q", q), ("k", k), ("v", v), ("m", m)], {"causal": False},
            {"y": F.scaled_dot_product_attention(d(q), d(k), d(v), attn_mask=d(m))})
    q, k, v = fam.rand(3, 4, 8), fam.rand(3, 6, 8), fam.rand(3, 6, 2)
    m = fam.randint(0, 2, 3, 1, 6, dtype=torch.bool)
    m[:, :, 0] = True  # no fully masked rows
    fam.add("bool_mask", "attention", [("q", q), ("k", k), ("v", v), ("m", m)], {"causal": False},
            {"y": F.scaled_dot_product_attention(d(q), d(k), d(v), attn_mask=m)})


def quantization(fam):
    def q_ref(x, s, axis, dtype):
        if s.dim() == 1 and s.numel() > 1:
            shape = [1] * x.dim()
            shape[axis] = -1
            s = s.reshape(shape)
        v = x.to(F32) / s.to(F32)  # fp32 arithmetic, as specified
        if dtype == "int8":
            return torch.clamp(torch.round(v), -128, 127).to(torch.int8)
        return torch.clamp(v, -448.0, 448.0).to(torch.float8_e4m3fn)

    for dtype in ("int8", "fp8e4m3"):
        hi = 448.0 if dtype == "fp8e4m3" else 127.0
        x = fam.rand(4, 6, lo=-1.2, hi=1.2)
        s = torch.tensor([1.0 / hi], dtype=F32)
        fam.add(f"q_{dtype}_per_tensor", "quantize", [("x", x), ("s", s)], {"output_type": dtype, "axis": 1},
                {"y": q_ref(x, s, 1, dtype)}, atol=0.0, rtol=0.0)
        x = fam.rand(2, 3, 4)
        s = fam.rand(3, lo=0.5 / hi, hi=1.5 / hi)
        fam.add(f"q_{dtype}_per_channel_axis1", "quantize", [("x", x), ("s", s)], {"output_type": dtype, "axis": 1},
                {"y": q_ref(x, s, 1, dtype)}, atol=0.0, rtol=0.0)
        x = fam.rand(5, 3)
        s = fam.rand(3, lo=0.5 / hi, hi=1.5 / hi)
        fam.add(f"q_{dtype}_per_channel_axis_m1", "quantize", [("x", x), ("s", s)], {"output_type": dtype, "axis": -1},
                {"y": q_ref(x, s, 1, dtype)}, atol=0.0, rtol=0.0)
        q = fam.randint(-128, 128, 3, 5, dtype=torch.int8) if dtype == "int8" else \
            fam.rand(3, 5, lo=-400.0, hi=400.0).to(torch.float8_e4m3fn)
        s = fam.rand(3, lo=0.01, hi=0.1)
        fam.add(f"dq_{dtype}_per_channel_axis0", "dequantize", [("q", q), ("s", s)],
                {"output_type": "fp32", "axis": 0}, {"y": q.to(F32) * s.reshape(3, 1)}, atol=0.0, rtol=0.0)
        s = torch.tensor(0.05, dtype=F32)
        fam.add(f"dq_{dtype}_per_tensor_fp16", "dequantize", [("q", q), ("s", s)],
                {"output_type": "fp16", "axis": 1}, {"y": (q.to(F32) * s).to(torch.float16)}, atol=0.0, rtol=0.0)


FAMILIES = [
    ("convolution", convolution), ("deconvolution", deconvolution), ("matmul", matmul),
    ("elementwise", elementwise), ("unary", unary), ("activation", activation),
    ("softmax_reduce_topk", softmax_reduce), ("normalization", normalization), ("pooling", pooling),
    ("resize", resize), ("shuffle_gather_select_cast", shuffle), ("grid_sample", grid_sample),
    ("attention", attention), ("quantization", quantization),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="tests/fixtures/ops", help="output directory")
    parser.add_argument("--only", nargs="*", help="family names to regenerate")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.use_deterministic_algorithms(True)
    command = "python3 scripts/gen-op-references.py " + " ".join(sys.argv[1:])
    total = 0
    for i, (name, fn) in enumerate(FAMILIES):
        if args.only and name not in args.only:
            continue
        fam = Family(name, seed=20260 + i)
        fn(fam)
        path, count = fam.save(args.out, command.strip())
        total += os.path.getsize(path)
        print(f"{path}: {count} cases, {os.path.getsize(path)} bytes")
    print(f"total {total} bytes")


if __name__ == "__main__":
    main()
