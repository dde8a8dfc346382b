#!/usr/bin/env python3
"""Issue 19's speed table: our fp16 engine against our quantized ones (int8 and fp8, Q/DQ on every
convolution / linear layer) for ResNet-50 and the BERT-base encoder at batch 32 and 1, each engine
built with the builder's own tactic search for exactly the timed shape, then timed by `tensoracle
bench` in both of its modes:
  latency     each call waited for (per-call synchronous latency)
  throughput  calls back to back (what a serving loop sees)
Medians in ms; ratio = fp16 median / candidate median in the same mode (above 1: faster than fp16).

The quantized graphs read activation scales from `tensoracle calibrate` (method max) on the
fixture's inputs; the scales' values do not change which kernels run, their shapes do: weights
are calibrated per output channel, or per tensor for a graph written with the suffix `:tensor`
(`--graphs fp16,fp8_fp16,fp8_fp16:tensor`; the same graph, `calibrate --per-tensor-weights`), the
form cuBLASLt's fp8 GEMM fuses whole (docs/quantization.md); the variant `fast` builds with
`--fp8-fast-accumulation` (`fp8_fp16:tensor+fast`). Every engine's build log
lines about Q/DQ layers that stayed explicit or unfused, or that the timer chose to run explicitly
(docs/quantization.md), and about tactic candidates
the timer skipped (with the reason) are kept with its row, and at
--profile-batch every engine's steps are also timed alone (bench --profile-layers), so a missed
target shows which layers stayed slow. torch.compile runs in scripts/torch-baseline.py, in the same
device call (scripts/gpu-check --only quantized-speed).

    python3 scripts/quantized-speed.py --cli build/gpu/tools/tensoracle/tensoracle \\
        --examples build/gpu/examples --fixtures MODEL_FIXTURES --out OUT [--models resnet50,bert_encoder]

--fixtures is scripts/gen-model-references.py's folder (<model>/weights.safetensors and
<model>/io.safetensors, whose inputs at batch 2 bench repeats to the timed batch). Writes
OUT/quantized-speed.json and .md after every measurement, so a run stopped by a time limit keeps
what it measured; each tensoracle call's output is under OUT/logs/. With --work DIR the engine
cache lives there, so running again after such a stop builds only the engines not yet built
(a reused engine's row says "cached" for its build time).
"""
import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

import numpy as np
from safetensors.numpy import load_file

from precision_rows import with_scales

INPUTS = {"resnet50": ["image"], "bert_encoder": ["input_ids", "attention_mask"]}
TARGETS = {"resnet50": 1.5, "bert_encoder": 1.4}  # issue 19: the best quantized engine at batch 32 vs our fp16


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cli", required=True)
    p.add_argument("--examples", required=True, help="folder of libtensoracle_example_<model>.so")
    p.add_argument("--fixtures", required=True, type=pathlib.Path)
    p.add_argument("--out", required=True, type=pathlib.Path)
    p.add_argument("--models", default="resnet50,bert_encoder")
    p.add_argument("--graphs", default="fp16,int8_fp16,fp8_fp16,int8,fp8",
                   help="graph suffixes, fp16 first (the baseline); SUFFIX:tensor calibrates its weights per tensor, "
                        "SUFFIX:fast builds with --fp8-fast-accumulation, SUFFIX:tensor+fast both")
    p.add_argument("--batches", default="32,1")
    p.add_argument("--profile-batch", type=int, default=32)
    p.add_argument("--iterations", type=int, default=200)
    p.add_argument("--backend", default="cuda", help="cpu: a smoke test of the script itself")
    p.add_argument("--work", type=pathlib.Path,
                   help="keep the engine cache and the calibrated weights here (default: a temporary folder): "
                        "a second run on the same machine and tree reuses every engine the first one built")
    return p.parse_args()


class Run:
    def __init__(self, args, work):
        self.args, self.work = args, work
        self.logs = args.out / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.env = {"TENSORACLE_CACHE_DIR": str(work / "cache")}

    def call(self, name, argv):
        """stdout of one tensoracle call (stderr beside it in the log); raises with the log's tail."""
        log = self.logs / f"{name}.log"
        result = subprocess.run([self.args.cli] + argv, capture_output=True, text=True, env=os.environ | self.env)
        log.write_text(result.stdout + "\n--- stderr\n" + result.stderr)
        if result.returncode != 0:
            tail = (result.stderr or result.stdout).strip().splitlines()[-3:]
            raise RuntimeError(f"tensoracle {argv[0]} exit {result.returncode}: " + " | ".join(tail))
        return result.stdout


def input_specs(inputs, batch):
    """--input NAME:DIMS for each input at `batch` (the engine declared for exactly the timed shape)."""
    specs = []
    for name, array in inputs.items():
        dims = "x".join(str(d) for d in (batch, *array.shape[1:]))
        specs += ["--input", f"{name}:{dims}"]
    return specs


def markdown(report):
    lines = ["# Quantized engines against our fp16 engine (tensoracle bench, medians in ms)", "",
             "ratio: fp16 median / this engine's in the same mode (above 1: faster). latency: each call "
             "waited for; throughput: calls back to back.", ""]
    for model, m in report["models"].items():
        lines += [f"## {model}", "", "| graph | batch | latency ms | throughput ms | ratio (latency) | "
                  "ratio (throughput) | build s | Q/DQ explicit or unfused (log lines) |", "|---|---:|---:|---:|---:|---:|---:|---|"]
        for row in m["rows"]:
            if "error" in row:
                lines.append(f"| {row['graph']} | {row['batch']} | FAILED: {row['error'][:160]} ||||||")
                continue
            explicit = len(row["explicit"])
            lines.append(f"| {row['graph']} | {row['batch']} | {row['latency_ms']:.4f} | {row['throughput_ms']:.4f} | "
                         f"{row.get('ratio_latency', float('nan')):.3f} | {row.get('ratio_throughput', float('nan')):.3f} | "
                         f"{'cached' if row.get('cache_hit') else format(row['build_s'], '.1f')} | {explicit} |")
        if "target" in m:
            lines += ["", m["target"]]
        lines.append("")
        for batch in sorted({r["batch"] for r in m["rows"] if r.get("layers")}):
            lines += time_by_tactic([r for r in m["rows"] if r["batch"] == batch])
        for row in m["rows"]:
            if row.get("explicit"):
                lines += [f"{row['graph']} batch {row['batch']}, build log:", ""] + \
                         [f"    {line}" for line in row["explicit"][:40]] + [""]
            if row.get("skipped"):
                lines += [f"{row['graph']} batch {row['batch']}, tactic candidates skipped "
                          f"({len(row['skipped'])}; the first 40):", ""] + \
                         [f"    {line}" for line in row["skipped"][:40]] + [""]
            if row.get("layers"):
                top = sorted(row["layers"], key=lambda l: -l["median_ms"])[:12]
                total = sum(l["median_ms"] for l in row["layers"])
                lines += [f"{row['graph']} batch {row['batch']}: slowest steps timed alone (sum of all "
                          f"{len(row['layers'])} steps {total:.4f} ms)", "",
                          "| step | kind | tactic | ms |", "|---|---|---|---:|"]
                lines += [f"| {l['layers'][:80]} | {l['kind']} | {l['tactic']} | {l['median_ms']:.4f} |"
                          for l in top]
                lines.append("")
    return "\n".join(lines) + "\n"


def tactic_kind(tactic):
    """A tactic's family and path without its engine index: "cublaslt.qmatmul#explicit0" ->
    "cublaslt.qmatmul#explicit", "cudnn.conv#5+pad8" -> "cudnn.conv+pad8"."""
    kind = re.sub(r"#([a-z_]*)\d+", r"#\1", tactic).replace("#+", "+")
    return kind[:-1] if kind.endswith("#") else kind


def time_by_tactic(rows):
    """Markdown: the steps of each engine in `rows` (one batch) grouped by layer kind and tactic
    kind, with their count and summed time alone: where a quantized engine spends what fp16
    does not."""
    timed = [r for r in rows if r.get("layers")]
    sums = {}
    for r in timed:
        for l in r["layers"]:
            cell = sums.setdefault((l["kind"], tactic_kind(l["tactic"])), {}).setdefault(r["graph"], [0, 0.0])
            cell[0] += 1
            cell[1] += l["median_ms"]
    order = sorted(sums, key=lambda k: -max(ms for _, ms in sums[k].values()))
    lines = [f"Steps by kind and tactic at batch {timed[0]['batch']} (count, sum of medians timed alone in ms):", "",
             "| kind | tactic | " + " | ".join(r["graph"] for r in timed) + " |",
             "|---|---|" + "---:|" * len(timed)]
    for key in order:
        cells = [sums[key].get(r["graph"]) for r in timed]
        lines.append(f"| {key[0]} | {key[1]} | " +
                     " | ".join(f"{c[0]} / {c[1]:.3f}" if c else "" for c in cells) + " |")
    totals = [f"{len(r['layers'])} / {sum(l['median_ms'] for l in r['layers']):.3f}" for r in timed]
    lines.append("| **all** | | " + " | ".join(totals) + " |")
    return lines + [""]


def write(out, report):
    (out / "quantized-speed.json").write_text(json.dumps(report, indent=1))
    text = markdown(report)
    (out / "quantized-speed.md").write_text(text)
    return text


class Model:
    """One model's package, weights, inputs and (calibrated once per format) scales."""

    def __init__(self, run, model):
        args = run.args
        self.run, self.name = run, model
        self.package = str(pathlib.Path(args.examples) / f"libtensoracle_example_{model}.so")
        self.weights = args.fixtures / model / "weights.safetensors"
        io = load_file(str(args.fixtures / model / "io.safetensors"))
        self.inputs = {name: io[name] for name in INPUTS[model]}
        self.inputs_file = run.work / f"{model}-inputs.npz"
        np.savez(self.inputs_file, **self.inputs)
        self.scales = {}

    def weights_for(self, suffix):
        """The weights file for graph `suffix` (variant tensor: weight scales per tensor)."""
        precision = suffix.partition(":")[0].split("_")[0]
        variant = "tensor" if "tensor" in variants_of(suffix) else ""
        if precision not in ("int8", "fp8"):
            return self.weights
        key = f"{precision}-{variant}" if variant else precision
        if key not in self.scales:
            out = self.run.work / f"{self.name}-scales-{key}.safetensors"
            per_tensor = ["--per-tensor-weights"] if variant == "tensor" else []
            self.run.call(f"{self.name}-calibrate-{key}",
                          ["calibrate", "--package", self.package, "--graph", f"{self.name}_{precision}", "--weights",
                           str(self.weights), "--backend", self.run.args.backend, "--method", "max", "--output",
                           str(out), "--inputs", str(self.inputs_file)] + per_tensor)
            self.scales[key] = with_scales(self.run.work, self.weights, out, f"{self.name}-{key}")
        return self.scales[key]


def variants_of(suffix):
    """The variants of graph `suffix` (SUFFIX:VARIANT+VARIANT): tensor, fast."""
    variants = set(filter(None, suffix.partition(":")[2].split("+")))
    if variants - {"tensor", "fast"}:
        raise ValueError(f"graph suffix '{suffix}': variants are 'tensor' (weight scales per tensor) and 'fast' "
                         "(built with --fp8-fast-accumulation), joined by '+'")
    return variants


def time_batch(model, batch, report, write_now):
    """Every graph of `model` at `batch`, fp16 first; at --profile-batch, the target check."""
    run, args = model.run, model.run.args
    m = report["models"].setdefault(model.name, {"rows": []})
    baseline = None
    for suffix in args.graphs.split(","):
        graph = f"{model.name}_{suffix}"
        tag = f"{graph.replace(':', '-').replace('+', '-')}-b{batch}"
        row = {"graph": graph, "batch": batch}
        try:
            source = ["--package", model.package, "--graph", graph.partition(":")[0], "--weights", str(model.weights_for(suffix)),
                      "--backend", args.backend] + input_specs(model.inputs, batch)
            fast = ["--fp8-fast-accumulation"] if "fast" in variants_of(suffix) else []
            built = json.loads(run.call(f"build-{tag}", ["build"] + source + fast + ["--json"]))
            row["build_s"] = built["build_seconds"]
            row["cache_hit"] = built.get("cache_hit", False)
            # The network passes' log, and the backend's from the engine (inspect): fusion decisions
            # and every tactic candidate skipped, with cuDNN's or the timer's reason.
            plan_log = json.loads(run.call(f"inspect-{tag}", ["inspect", built["engine_path"], "--json"]))["build_log"]
            log = built["build_log"] + plan_log
            row["explicit"] = [l for l in log if "kept explicit" in l or "not fused" in l or "Q/DQ run explicitly" in l]
            row["skipped"] = [l for l in plan_log if "skipped tactic" in l]
            bench = ["bench", "--engine", built["engine_path"], "--inputs", str(model.inputs_file), "--batch",
                     str(batch), "--iterations", str(args.iterations), "--json"]
            if batch == args.profile_batch:
                bench.append("--profile-layers")
            timed = json.loads(run.call(f"bench-{tag}", bench))
            for r in timed["runs"]:
                row[f"{r['mode']}_ms"] = r["stats"]["median_ms"]
                row[f"{r['mode']}_p90_ms"] = r["stats"]["p90_ms"]
            row["valid"] = timed["valid"]
            row["layers"] = timed.get("layers", [])
            if baseline is None:
                baseline = row
            for mode in ("latency", "throughput"):
                row[f"ratio_{mode}"] = baseline[f"{mode}_ms"] / row[f"{mode}_ms"]
        except Exception as e:  # noqa: BLE001 -- recorded, the other rows still run
            row["error"] = f"{type(e).__name__}: {e}"
        m["rows"].append(row)
        print(f"{tag}: " + (row.get("error") or f"latency {row['latency_ms']:.4f} ms, throughput "
                            f"{row['throughput_ms']:.4f} ms, ratio {row['ratio_latency']:.3f}"), flush=True)
        write_now()
    at_profile = [r for r in m["rows"] if r["batch"] == args.profile_batch and "error" not in r
                  and r["graph"] != f"{model.name}_fp16"]
    if batch == args.profile_batch and at_profile:
        best = max(at_profile, key=lambda r: r["ratio_latency"])
        need = TARGETS.get(model.name)
        m["target"] = (f"Best quantized engine at batch {args.profile_batch}: {best['graph']}, "
                       f"{best['ratio_latency']:.3f}x our fp16 (latency)"
                       + (f"; target {need}x: {'met' if best['ratio_latency'] >= need else 'MISSED'}" if need else ""))
        write_now()


def main():
    args = parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    report = {"models": {}, "iterations": args.iterations, "calibration": "max"}
    def measure(work):
        run = Run(args, work)
        models = [Model(run, name) for name in args.models.split(",")]
        # Batch-major, so a run stopped by a time limit has every model's first batch.
        for batch in [int(b) for b in args.batches.split(",")]:
            for model in models:
                time_batch(model, batch, report, lambda: write(args.out, report))

    if args.work:
        args.work.mkdir(parents=True, exist_ok=True)
        measure(args.work)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            measure(pathlib.Path(tmp))
    print(write(args.out, report))
    failed = [r for m in report["models"].values() for r in m["rows"] if "error" in r]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
