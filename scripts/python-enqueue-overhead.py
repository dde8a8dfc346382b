#!/usr/bin/env python3
"""What the Python binding adds to Execution.enqueue: the same execution, on the same bound device
buffers and stream, enqueued from a Python loop and from a C++ loop (tensoracle's
_enqueue_loop_seconds), each call timed on the host clock, in one process.

    python3 scripts/python-enqueue-overhead.py --package build/gpu/examples/libtensoracle_example_tinynet.so

Runs the package graph at batch 1 on the cuda backend with PyTorch tensors (DLPack) by default.
Calls are made in bursts of --burst, with a device synchronization between bursts (not timed), so
the launch queue never fills and each call measures host work only. Prints the median and p90 of
both loops and their difference; with --json, writes them too. Exit status 1 when the median
difference reaches --limit-us (20 µs, the issue's bound), 2 on bad usage."""

import argparse
import json
import statistics
import sys
import time

import numpy as np

import tensoracle
from tensoracle import _tensoracle


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--package", required=True, help="model package (shared library)")
    parser.add_argument("--graph", default=None, help="graph of the package (default: its only one)")
    parser.add_argument("--backend", default="cuda", choices=["cuda", "cpu"], help="cpu: a smoke test of the script")
    parser.add_argument("--iterations", type=int, default=2000)
    parser.add_argument("--burst", type=int, default=16)
    parser.add_argument("--limit-us", type=float, default=20.0)
    parser.add_argument("--json", help="also write the numbers here")
    args = parser.parse_args()

    package = tensoracle.ModelPackage.load(args.package)
    graph = args.graph or package.graphs[0].name
    build = package.engine_build(graph)
    build.backend = args.backend
    build.quiet = True
    opened = tensoracle.open_engine(build)
    execution = opened.create_execution()
    shapes = {}
    for declaration in build.inputs:
        shape = list(declaration.profiles[0].min)  # batch 1: the smallest shape of profile 0
        shapes[declaration.name] = tuple(shape)
    execution.set_input_shapes(shapes)

    if args.backend == "cuda":
        import torch

        def buffer(shape):
            return torch.zeros(shape, dtype=torch.float32, device="cuda")
        stream = torch.cuda.Stream()
        handle = stream.cuda_stream
        synchronize = stream.synchronize
    else:
        def buffer(shape):
            return np.zeros(shape, np.float32)
        handle = None

        def synchronize():
            pass
    buffers = {name: buffer(shape) for name, shape in shapes.items()}
    for name in opened.engine.output_names:
        buffers[name] = buffer(execution.tensor_shape(name))
    for name, b in buffers.items():
        execution.bind(name, b)

    def python_burst(n):
        times = []
        for _ in range(n):
            start = time.perf_counter()
            execution.enqueue(handle)
            times.append(time.perf_counter() - start)
        return times

    def cpp_burst(n):
        return _tensoracle._enqueue_loop_seconds(execution, handle, n)

    for burst in (python_burst, cpp_burst):  # warm-up: CUDA graph capture, caches
        burst(args.burst)
        synchronize()
    python_times, cpp_times = [], []
    for _ in range(max(1, args.iterations // args.burst)):  # interleaved, so drift hits both
        python_times += python_burst(args.burst)
        synchronize()
        cpp_times += cpp_burst(args.burst)
        synchronize()

    us = 1e6
    report = {
        "engine": f"{package.name}/{graph} on {args.backend}, inputs {shapes}",
        "calls_each": len(python_times),
        "python_median_us": statistics.median(python_times) * us,
        "python_p90_us": percentile(python_times, 0.9) * us,
        "cpp_median_us": statistics.median(cpp_times) * us,
        "cpp_p90_us": percentile(cpp_times, 0.9) * us,
    }
    report["added_median_us"] = report["python_median_us"] - report["cpp_median_us"]
    report["added_p90_us"] = report["python_p90_us"] - report["cpp_p90_us"]
    report["limit_us"] = args.limit_us
    report["within_limit"] = report["added_median_us"] < args.limit_us
    for key, value in report.items():
        print(f"{key:>18}: {value:.2f}" if isinstance(value, float) else f"{key:>18}: {value}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    return 0 if report["within_limit"] else 1


if __name__ == "__main__":
    sys.exit(main())
