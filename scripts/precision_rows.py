"""The rows of a precision quality table, shared by scripts/minilm-quality.py and
scripts/resnet50-quality.py: one engine per precision of a model package (fp16, bf16, and int8 /
fp8 once per calibration method, scales from `tensoracle calibrate`), each run on the same inputs
as the fp32 engine that every row is compared with. The model's script supplies the inputs, the
metrics and the PyTorch side; this module makes the tensoracle calls.
"""
import json
import os
import subprocess
import time

import numpy as np
from safetensors import safe_open

METHODS = ["max", "percentile", "entropy", "mse"]


class Cli:
    """The tensoracle calls of one table, each logged to LOGS/<name>.log; a failure raises with the log's tail."""

    def __init__(self, args, weights, output, logs, cache):
        # args: cli, package, backend, optimization_level (None: the builder's default).
        self.args, self.weights, self.output, self.logs = args, weights, output, logs
        # Its own engine cache: a dozen engines that no later run wants, deleted with the work folder.
        self.env = {"TENSORACLE_CACHE_DIR": str(cache)} | dict(os.environ)

    def call(self, name, argv):
        log = self.logs / f"{name}.log"
        start = time.time()
        with open(log, "w") as f:
            status = subprocess.run([self.args.cli] + argv, stdout=f, stderr=subprocess.STDOUT, env=self.env).returncode
        if status != 0:
            tail = log.read_text().strip().splitlines()[-3:]
            raise RuntimeError(f"tensoracle {argv[0]} exit {status}: " + " | ".join(tail))
        return time.time() - start

    def build_options(self, graph, weights, optimization_level):
        opts = ["--package", self.args.package, "--graph", graph, "--weights", str(weights or self.weights),
                "--backend", self.args.backend]
        return opts + ([] if optimization_level is None else ["--optimization-level", str(optimization_level)])

    def run(self, name, graph, inputs, outputs, weights=None):
        """The engine's output named self.output on `inputs` (an .npz), and the call's seconds (build included)."""
        seconds = self.call(name, ["run"] + self.build_options(graph, weights, self.args.optimization_level)
                            + ["--inputs", str(inputs), "--outputs", str(outputs)])
        return np.load(outputs)[self.output], seconds

    def calibrate(self, name, graph, batches, method, scales):
        self.call(name, ["calibrate", "--package", self.args.package, "--graph", graph, "--weights", str(self.weights),
                         "--backend", self.args.backend, "--method", method, "--output", str(scales), "--inputs"]
                  + [str(b) for b in batches])

    def bench_ms(self, name, graph, inputs, batch, weights=None):
        """The median latency at `batch` of an engine built with the builder's own tactic search."""
        out = self.logs / f"{name}.json"
        with open(out, "w") as f:
            argv = ["bench"] + self.build_options(graph, weights, None) + [
                "--inputs", str(inputs), "--batch", str(batch), "--mode", "latency", "--iterations", "100", "--json"]
            status = subprocess.run([self.args.cli] + argv, stdout=f, stderr=subprocess.DEVNULL, env=self.env).returncode
        if status != 0:
            raise RuntimeError(f"tensoracle bench exit {status}")
        return json.loads(out.read_text())["runs"][0]["stats"]["median_ms"]


def with_scales(work, weights, scales, name):
    """A sharded index over the weights and a calibration's scales: what the quantized graphs read.
    An index names its shards relative to itself, so the weights get a link beside it when elsewhere."""
    if weights.parent.resolve() != work.resolve():
        link = work / weights.name
        if not link.exists():
            link.symlink_to(weights.resolve())
    names = {}
    for path in (weights, scales):
        with safe_open(str(path), "numpy") as f:
            names |= {n: path.name for n in f.keys()}
    index = work / f"{name}.index.json"
    index.write_text(json.dumps({"metadata": {}, "weight_map": names}))
    return index


def plan_rows(base_graph, precisions, methods, fp16_between):
    """(row name, graph, calibration or None): `<base>_<precision>` graphs, int8 / fp8 once per method.
    A quantized variant such as `int8_mixed` reads the scales calibrated on `<base>_int8`."""
    rows = []
    for precision in filter(None, precisions.split(",")):
        graph = f"{base_graph}_{precision}"
        fmt = precision.split("_")[0]
        if fmt in ("int8", "fp8"):
            for method in filter(None, methods.split(",")):
                rows.append((f"{precision} {method}", graph, (fmt, method)))
                if fp16_between:
                    rows.append((f"{precision}_fp16 {method}", graph + "_fp16", (fmt, method)))
        else:
            rows.append((precision, graph, None))
    return rows


class Table:
    """Runs the rows against the fp32 engine's output; each row's metrics come from compare(out)."""

    def __init__(self, cli, work, base_graph, batches):
        self.cli, self.work, self.base_graph, self.batches = cli, work, base_graph, batches
        self.scales_of = {}

    def weights_for(self, calibration):
        """The plain weights, or the weights with the scales of this (precision, method), calibrated once."""
        if not calibration:
            return self.cli.weights
        if calibration not in self.scales_of:
            precision, method = calibration
            scales = self.work / f"scales-{precision}-{method}.safetensors"
            self.cli.calibrate(f"calibrate-{precision}-{method}", f"{self.base_graph}_{precision}", self.batches,
                               method, scales)
            self.scales_of[calibration] = with_scales(self.work, self.cli.weights, scales, scales.stem)
        return self.scales_of[calibration]

    def run_rows(self, rows, inputs, compare, on_row):
        """Each row's record (name, graph, seconds and compare()'s metrics, or its error); on_row(record) after each."""
        records = []
        for name, graph, calibration in rows:
            tag = name.replace(" ", "-")
            try:
                out, seconds = self.cli.run(tag, graph, inputs, self.work / f"{tag}.npz", self.weights_for(calibration))
                row = {"name": name, "graph": graph, "seconds": seconds} | compare(out)
            except Exception as e:  # noqa: BLE001 -- recorded, the other rows still run
                row = {"name": name, "graph": graph, "error": f"{type(e).__name__}: {e}"}
            records.append(row)
            on_row(row)
        return records

    def latencies(self, rows, inputs, batch):
        """Median latency (ms) at `batch` of the fp32 engine and of each row's, or why it failed."""
        result = {}
        for name, graph, calibration in [("fp32", self.base_graph, None)] + rows:
            try:
                result[name] = round(self.cli.bench_ms(f"bench-{name.replace(' ', '-')}", graph, inputs, batch,
                                                       self.weights_for(calibration)), 4)
            except Exception as e:  # noqa: BLE001
                result[name] = f"failed: {e}"
        return result


def latency_line(report, batch):
    """The markdown line of a report's bench latencies, or an empty list."""
    if not report.get("latency_ms"):
        return []
    return ["", f"Latency at batch {batch} (tensoracle bench, median ms): "
            + ", ".join(f"{k} {v}" for k, v in report["latency_ms"].items())]


def write_report(out, stem, report, markdown):
    """OUT/STEM.json and .md, rewritten after every row: a run stopped by a time limit keeps what it measured."""
    (out / f"{stem}.json").write_text(json.dumps(report, indent=2) + "\n")
    text = markdown(report)
    (out / f"{stem}.md").write_text(text)
    return text
