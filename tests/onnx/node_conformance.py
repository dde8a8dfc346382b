#!/usr/bin/env python3
"""The ONNX backend node tests through tensoracle's importer, on the cpu backend (or --backend cuda).

The cases come from the installed `onnx` package (onnx.backend.test.case.node.collect_testcases():
each case's model with its input and expected output arrays); nothing is committed. Each case is
written to a temporary folder and run with `tensoracle run --onnx MODEL --backend B --inputs ...
--outputs ...` (import, build, run), then its outputs are compared with the expected arrays at
the case's own tolerances (rtol, atol; onnx's defaults are 1e-3 and 1e-7).

One change is made to each model: graph inputs that an op reads as an attribute in disguise (a
Reshape's shape, a Slice's starts/ends/axes/steps, the axes of Squeeze/Unsqueeze/the reductions,
a Pad's pads and value, TopK's K, Clip's bounds, Dropout's ratio and mode, the shapes of Expand,
Tile and ConstantOfShape, Split's sizes, Range's bounds, Resize's scales and sizes, the scales and
zero points of QuantizeLinear/DequantizeLinear, Trilu's k) become initializers
holding the test's values, as exporters write them: the importer reads those at import time and
refuses them as run-time inputs (docs/onnx.md).

Each case ends as one of
  passed   imported, built, ran, every output matches;
  refused  the importer (exit 2) or the builder (exit 1 before running) refused the model with an
           error naming the ONNX node or model;
  failed   anything else: a mismatch, a wrong shape or type, a crash, an error that names nothing.
The script prints the counts per op and in total, exits 1 when any case failed (outside the
allow-list below), and with --write-docs replaces the generated section of its backend in
docs/onnx.md (each backend has its own; a missing one is added after the others).

  tests/onnx/node_conformance.py --cli build/release/tools/tensoracle/tensoracle [--jobs 2]
      [--filter REGEX] [--write-docs docs/onnx.md] [--verbose]
  tests/onnx/node_conformance.py --cli build/gpu/tools/tensoracle/tensoracle --backend cuda --jobs 16
      [--shard I/N]                                  (scripts/gpu-check --only onnx)

Exit status 77 when the onnx package is not importable (ctest counts that as skipped).
"""
import argparse
import collections
import concurrent.futures
import datetime
import os
import re
import io
import subprocess
import sys
import tempfile
import zipfile

try:
    import ml_dtypes  # noqa: F401  (registers bfloat16 and float8 for np.load of tensoracle's outputs)
    import numpy as np
    from numpy.lib import format as npy_format
    import onnx
    import onnx.backend.test.case.node as node_cases
    from onnx import numpy_helper
except ImportError as error:  # the test is skipped, not failed, where onnx is not installed
    print(f"skipped: {error} (scripts/setup installs onnx into .venv)")
    sys.exit(77)

# (op type, input index) pairs that the importer reads as constants.
CONSTANT_INPUTS = {
    "Reshape": {1}, "Slice": {1, 2, 3, 4}, "Squeeze": {1}, "Unsqueeze": {1}, "Pad": {1, 2, 3},
    "TopK": {1}, "Clip": {1, 2}, "Dropout": {1, 2}, "ReduceSum": {1}, "ReduceMean": {1},
    "ReduceMax": {1}, "ReduceMin": {1}, "ReduceProd": {1}, "ReduceL1": {1}, "ReduceL2": {1},
    "ReduceSumSquare": {1}, "ReduceLogSum": {1}, "ReduceLogSumExp": {1},
    "Expand": {1}, "Tile": {1}, "Split": {1}, "ConstantOfShape": {0}, "Range": {0, 1, 2},
    "Resize": {1, 2, 3}, "QuantizeLinear": {1, 2}, "DequantizeLinear": {1, 2}, "Trilu": {1},
}

# Known failures: case name -> why. Keep it short and reasoned; every entry is a bug or a
# documented semantic difference to fix.
KNOWN_FAILURES = {
    "test_attention_4d_causal_bf16_expanded":
        "bf16 rounding: the expanded graph's layers (scores, softmax, weighted sum) each round to bf16, "
        "2 ulps (0.0039) off the reference's values below 0.5",
    "test_attention_4d_attn_mask_causal_bf16_expanded":
        "bf16 rounding, as test_attention_4d_causal_bf16_expanded",
    "test_attention_4d_causal_bf16":
        "bf16 rounding: the attention layer rounds its output once from fp64, the reference's float32 steps end "
        "2 ulps away at values below 0.5",
    "test_attention_causal_boolmask_nan_robustness":
        "a fully masked row: the attention layer gives NaN (as PyTorch's SDPA, docs/ops.md), ONNX's reference 0",
    "test_attention_23_boolmask_fullymasked_row_nan_robustness":
        "a fully masked row: NaN from the attention layer, 0 from ONNX's reference",
}

# numpy dtypes that ml_dtypes adds.
ML_DTYPES = ("bfloat16", "float8_e4m3fn", "float8_e5m2")

# The least relative tolerance of outputs of a 16-bit float type: two units in the last place. The
# reference computes a function (Celu, an expanded Attention) in float32 or float64 and rounds
# once; tensoracle's layers each round to the tensor's type, as the model's graph says they do.
RTOL_FLOOR = {"float16": 2.0 ** -9, "bfloat16": 2.0 ** -7}

END = "<!-- END GENERATED -->"
# The backend whose generated section predates the others: its marker names no backend.
FIRST_SECTION_BACKEND = "cpu"


def begin_marker(backend):
    """The generated section's first line: the cpu one predates the others and keeps its text."""
    suffix = "" if backend == FIRST_SECTION_BACKEND else f" --backend {backend}"
    return f"<!-- BEGIN GENERATED: tests/onnx/node_conformance.py{suffix} -->"


def constants_from_inputs(model, inputs):
    """Moves the graph inputs read as constants into initializers; returns the remaining feeds."""
    graph = model.graph
    wanted = set()
    for node in graph.node:
        for index in CONSTANT_INPUTS.get(node.op_type, ()):
            if index < len(node.input) and node.input[index]:
                wanted.add(node.input[index])
    names = [i.name for i in graph.input if i.name not in {t.name for t in graph.initializer}]
    feeds = {}
    keep = []
    for value_info, name in zip([i for i in graph.input if i.name in names], names):
        array = inputs.get(name)
        if name in wanted and isinstance(array, np.ndarray):
            graph.initializer.append(numpy_helper.from_array(array, name))
        else:
            keep.append(value_info)
            feeds[name] = array
    del graph.input[:]
    graph.input.extend(keep)
    return feeds


def save_npz(path, arrays):
    """np.savez, except that ml_dtypes arrays (bfloat16, float8) keep their type: np.save would
    write them as raw bytes ('<V2'); tensoracle reads the dtype's name as the descr
    (docs/file-formats.md)."""
    with zipfile.ZipFile(path, "w") as archive:
        for name, array in arrays.items():
            buffer = io.BytesIO()
            if array.dtype.name in ML_DTYPES:
                npy_format.write_array_header_1_0(buffer, {"descr": array.dtype.name, "fortran_order": False,
                                                           "shape": array.shape})
                buffer.write(array.tobytes(order="C"))
            else:
                np.save(buffer, array)
            archive.writestr(name + ".npy", buffer.getvalue())


def run_case(case, cli, backend, workdir, build_flags):
    """(status, detail) of one case."""
    model = onnx.ModelProto()
    model.CopyFrom(case.model)
    folder = os.path.join(workdir, case.name)
    os.makedirs(folder, exist_ok=True)
    results = []
    for n, (inputs, outputs) in enumerate(case.data_sets or [([], [])]):
        graph_inputs = [i.name for i in case.model.graph.input
                        if i.name not in {t.name for t in case.model.graph.initializer}]
        # Cases store the types numpy lacks (float8) as TensorProtos: numpy_helper gives ml_dtypes arrays.
        inputs = [numpy_helper.to_array(a) if isinstance(a, onnx.TensorProto) else a for a in inputs]
        outputs = [numpy_helper.to_array(a) if isinstance(a, onnx.TensorProto) else a for a in outputs]
        named = dict(zip(graph_inputs, inputs))
        if any(a is None or isinstance(a, (list, dict)) for a in named.values()):
            return "refused", "the case feeds sequences or optionals, which tensoracle has no type for"
        named = {name: np.asarray(a) for name, a in named.items()}
        if any(a.dtype == object for a in named.values()):
            return "refused", "the case feeds arrays of Python objects, which no array file holds"
        this = onnx.ModelProto()
        this.CopyFrom(model)
        feeds = constants_from_inputs(this, named)
        model_path = os.path.join(folder, f"model{n}.onnx")
        onnx.save(this, model_path)
        inputs_path = os.path.join(folder, f"inputs{n}.npz")
        save_npz(inputs_path, feeds)
        outputs_path = os.path.join(folder, f"outputs{n}.npz")
        env = dict(os.environ, TENSORACLE_CACHE_DIR=os.path.join(workdir, "cache"))
        proc = subprocess.run([cli, "run", "--onnx", model_path, "--backend", backend, "--inputs", inputs_path,
                               "--outputs", outputs_path, "--quiet", *build_flags], capture_output=True, text=True, env=env, timeout=300)
        message = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
        if proc.returncode != 0:
            clear = "ONNX node" in message or "ONNX model" in message or "engine '" in message
            if proc.returncode in (1, 2) and clear and not os.path.exists(outputs_path):
                return "refused", message.removeprefix("error: ")
            return "failed", f"exit {proc.returncode}: {message or proc.stdout.strip()[-300:]}"
        with np.load(outputs_path) as got:
            for value_info, expected in zip(case.model.graph.output, outputs):
                name = value_info.name
                if name not in got:
                    return "failed", f"output '{name}' missing"
                actual = got[name]
                expected = np.asarray(expected)
                if actual.shape != expected.shape:
                    return "failed", f"output '{name}': shape {actual.shape}, expected {expected.shape}"
                if actual.dtype != expected.dtype:
                    return "failed", f"output '{name}': dtype {actual.dtype}, expected {expected.dtype}"
                rtol = max(case.rtol, RTOL_FLOOR.get(expected.dtype.name, 0.0))
                if expected.dtype.name in ML_DTYPES:
                    ok = np.allclose(actual.astype(np.float32), expected.astype(np.float32), rtol=rtol,
                                     atol=case.atol, equal_nan=True)
                elif expected.dtype.kind in "fc":
                    ok = np.allclose(actual, expected, rtol=rtol, atol=case.atol, equal_nan=True)
                else:
                    ok = np.array_equal(actual, expected)
                if not ok:
                    worst = np.max(np.abs(actual.astype(np.float64) - expected.astype(np.float64))) if actual.size else 0
                    return "failed", f"output '{name}': max abs difference {worst:.3g} (rtol {rtol}, atol {case.atol})"
        results.append("passed")
    return "passed", ""


def op_of(case):
    ops = [n.op_type for n in case.model.graph.node]
    return ops[0] if len(ops) == 1 else (ops[-1] if ops else "(none)")


def write_docs(path, backend, rows, totals, command):
    """Replaces the backend's generated section of `path`, or adds it after the last one."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    begin = begin_marker(backend)
    if begin not in text:
        if begin_marker("cpu") not in text or END not in text:
            sys.exit(f"{path}: no generated section ({begin_marker('cpu')} ... {END})")
        head, tail = text.rsplit(END, 1)
        text = f"{head}{END}\n\nOn the {backend} backend:\n\n{begin}\n{END}{tail}"
    lines = [begin, "",
             f"Generated {datetime.date.today().isoformat()} with onnx {onnx.__version__} on the {backend} backend by "
             f"`{command}`.",
             "", "| op | passed | refused | failed |", "|---|---:|---:|---:|"]
    for op, c in rows:
        lines.append(f"| {op} | {c['passed']} | {c['refused']} | {c['failed']} |")
    lines.append(f"| **all {sum(totals.values())} cases** | **{totals['passed']}** | **{totals['refused']}** | "
                 f"**{totals['failed']}** |")
    lines += ["", END]
    head, rest = text.split(begin, 1)
    tail = rest.split(END, 1)[1]
    with open(path, "w", encoding="utf-8") as f:
        f.write(head + "\n".join(lines) + tail)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True, help="the tensoracle executable")
    parser.add_argument("--backend", default="cpu", help="tensoracle's backend for every case (cpu, cuda)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--filter", default="", help="only cases whose name matches this regular expression")
    parser.add_argument("--shard", default="", help="I/N: only the I-th of N equal shares of the cases (0-based)")
    parser.add_argument("--write-docs", default="", help="docs/onnx.md: replace its generated section with the counts")
    parser.add_argument("--verbose", action="store_true", help="print every case, not only failures")
    parser.add_argument("--optimization-level", type=int,
                        help="passed to every build (0: each layer's first candidate, untimed: far fewer GPU "
                             "launches per case; default: the builder's)")
    args = parser.parse_args()
    if args.write_docs and (args.filter or args.shard):
        sys.exit("--write-docs counts every case: give neither --filter nor --shard")

    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = [c for c in node_cases.collect_testcases(None) if c.kind == "node"]
    if args.filter:
        cases = [c for c in cases if re.search(args.filter, c.name)]
    if args.shard:
        index, count = (int(n) for n in args.shard.split("/"))
        cases = sorted(cases, key=lambda c: c.name)[index::count]
    per_op = collections.defaultdict(collections.Counter)
    totals = collections.Counter()
    unexpected = []
    with tempfile.TemporaryDirectory(prefix="tensoracle-onnx-") as workdir:
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            build_flags = [] if args.optimization_level is None else ["--optimization-level", str(args.optimization_level)]
            futures = {pool.submit(run_case, c, args.cli, args.backend, workdir, build_flags): c for c in cases}
            for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
                case = futures[future]
                try:
                    status, detail = future.result()
                except Exception as error:  # a case that breaks the runner is a failure, not a crash
                    status, detail = "failed", f"runner: {error}"
                if status == "failed" and case.name in KNOWN_FAILURES:
                    status, detail = "refused", f"known failure: {KNOWN_FAILURES[case.name]}"
                per_op[op_of(case)][status] += 1
                totals[status] += 1
                if status == "failed":
                    unexpected.append((case.name, detail))
                if args.verbose or status == "failed":
                    print(f"{status:8} {case.name}: {detail}", flush=True)
                if done % 100 == 0 or done == len(cases):  # a run stopped by a time limit still says how far it got
                    print(f"progress: {done}/{len(cases)} cases: {totals['passed']} passed, {totals['refused']} refused, "
                          f"{totals['failed']} failed", file=sys.stderr, flush=True)
    rows = sorted(per_op.items())
    print(f"\n{'op':28} {'passed':>7} {'refused':>8} {'failed':>7}")
    for op, c in rows:
        print(f"{op:28} {c['passed']:7} {c['refused']:8} {c['failed']:7}")
    print(f"{'all':28} {totals['passed']:7} {totals['refused']:8} {totals['failed']:7}   ({len(cases)} cases)")
    if args.write_docs:
        backend_flag = "" if args.backend == FIRST_SECTION_BACKEND else f" --backend {args.backend}"
        write_docs(args.write_docs, args.backend, rows, totals,
                   f"tests/onnx/node_conformance.py --cli {os.path.relpath(args.cli)}{backend_flag} --write-docs docs/onnx.md")
    if unexpected:
        print(f"\n{len(unexpected)} case(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
