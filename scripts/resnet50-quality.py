#!/usr/bin/env python3
"""Quality of tensoracle's lower-precision ResNet-50 engines (examples/resnet50, seeded weights):
every precision against the fp32 engine on the same images.

    python3 scripts/resnet50-quality.py --cli build/gpu/tools/tensoracle/tensoracle \\
        --package build/gpu/examples/libtensoracle_example_resnet50.so --fixtures MODEL_FIXTURES \\
        --out OUT [--backend cuda] [--optimization-level 0] [--time]

--fixtures is scripts/gen-model-references.py's folder: resnet50/weights.safetensors (torchvision
ResNet-50, seeded init with non-trivial batch-norm statistics) and resnet50/io.safetensors (two
images with PyTorch's fp32 and fp64 logits). Rows, each against the fp32 engine on --images seeded
images: the fp16 and bf16 engines, and the int8 and fp8 engines (Q/DQ on every convolution and
the classifier, weights per channel) for every calibration method, their activation scales from
`tensoracle calibrate` on seeded images that are not the evaluated ones; plus the fp32 engine
against PyTorch fp32 on the fixture's images. The images are standard normal, like the fixture's:
a seeded network has no data distribution to draw real images from. Metrics over the logits:
relative L2, max abs, cosine, and how many images' top-1 class changed. Writes
OUT/resnet50-quality.md and .json, and each tensoracle call's log under OUT/logs/. A row that
fails is recorded with its message; the others still run.
"""
import argparse
import pathlib
import shutil
import sys
import tempfile

import numpy as np
from safetensors.numpy import load_file

from precision_rows import METHODS, Cli, Table, plan_rows, latency_line, write_report

MAX_BATCH = 32  # the package's profile: 1 / 8 / 32
IMAGE = (3, 224, 224)
CALIBRATION_BATCH = 8


def images(count, seed):
    return {"image": np.random.default_rng(seed).standard_normal((count, *IMAGE), dtype=np.float32)}


def metrics(candidate, reference):
    c, r = candidate.astype(np.float64), reference.astype(np.float64)
    return {"rel_l2": float(np.linalg.norm(c - r) / np.linalg.norm(r)), "max_abs": float(np.abs(c - r).max()),
            "cosine": float((c * r).sum() / (np.linalg.norm(c) * np.linalg.norm(r))),
            "top1_changed": int((c.argmax(1) != r.argmax(1)).sum()),
            "non_finite": int((~np.isfinite(candidate)).sum())}


def markdown(report):
    level = report["optimization_level"]
    lines = [f"# ResNet-50 (seeded weights): engines vs the fp32 engine ({report['images']} images, "
             f"{report['backend']} backend, optimization level {level if level is not None else 'default'})", "",
             "Logit metrics; s: the `tensoracle run` call, build included.", "",
             "| row | rel L2 | max abs | cosine | top-1 changed | s |", "|---|---|---|---|---|---|"]
    for row in report["rows"]:
        if "error" in row:
            lines.append(f"| {row['name']} | FAILED: {row['error'][:200]} |||||")
            continue
        seconds = f"{row['seconds']:.1f}" if "seconds" in row else ""  # the PyTorch row has none
        count = row.get("images", report["images"])
        lines.append(f"| {row['name']} | {row['rel_l2']:.3e} | {row['max_abs']:.3e} | {row['cosine']:.7f} | "
                     f"{row['top1_changed']} / {count} | {seconds} |")
    if report.get("torch_verdict"):
        lines += ["", f"PyTorch side: {report['torch']}; fp32 engine vs PyTorch fp32 rel L2 "
                      f"{report['torch_vs_fp64']}; bar: {report['torch_verdict']}"]
    lines += latency_line(report, MAX_BATCH)
    return "\n".join(lines) + "\n"


def write(out, report):
    return write_report(out, "resnet50-quality", report, markdown)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cli", required=True)
    p.add_argument("--package", required=True)
    p.add_argument("--fixtures", required=True, type=pathlib.Path, help="scripts/gen-model-references.py's --out")
    p.add_argument("--out", required=True, type=pathlib.Path)
    p.add_argument("--backend", default="cuda")
    p.add_argument("--optimization-level", type=int, help="for every engine built (default: the builder's)")
    p.add_argument("--images", type=int, default=MAX_BATCH, help=f"evaluated images, 1..{MAX_BATCH}")
    p.add_argument("--calibration-batches", type=int, default=4, help=f"batches of {CALIBRATION_BATCH} images")
    p.add_argument("--precisions", default="fp16,bf16,int8,fp8", help="the rows beside fp32")
    p.add_argument("--methods", default=",".join(METHODS), help="calibration methods for int8 / fp8")
    p.add_argument("--fp16-between", action="store_true", help="also the _int8_fp16 / _fp8_fp16 graphs")
    p.add_argument("--time", action="store_true", help=f"time each engine at batch {MAX_BATCH} with tensoracle bench")
    args = p.parse_args()
    if not 1 <= args.images <= MAX_BATCH:
        sys.exit(f"--images {args.images}: 1..{MAX_BATCH}")
    fixture = args.fixtures / "resnet50"
    for name in ("weights.safetensors", "io.safetensors"):
        if not (fixture / name).is_file():
            sys.exit(f"{fixture / name}: missing (python3 scripts/gen-model-references.py --out {args.fixtures} "
                     "--models resnet50)")
    (args.out / "logs").mkdir(parents=True, exist_ok=True)
    work = pathlib.Path(tempfile.mkdtemp(prefix="resnet50-quality-"))
    try:
        return measure(args, fixture, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure(args, fixture, work):
    weights = fixture / "weights.safetensors"
    np.savez(work / "eval.npz", **images(args.images, seed=11))
    batches = []
    for b in range(args.calibration_batches):
        batches.append(work / f"calib{b}.npz")
        np.savez(batches[-1], **images(CALIBRATION_BATCH, seed=100 + b))
    cli = Cli(args, weights, "logits", args.out / "logs", work / "cache")
    report = {"images": args.images, "backend": args.backend, "optimization_level": args.optimization_level,
              "rows": []}

    # The fp32 engine against PyTorch on the fixture's images (fp32 on the GPU with TF32 off, and fp64).
    io = load_file(str(fixture / "io.safetensors"))
    np.savez(work / "fixture.npz", image=io["image"])
    try:
        ours, _ = cli.run("fp32-fixture", "resnet50", work / "fixture.npz", work / "fp32-fixture.npz")
        row = {"name": "fp32 engine vs PyTorch fp32", "images": len(io["image"])} | metrics(ours, io["logits"])
        torch_vs_fp64 = metrics(io["logits"], io["logits_fp64"])["rel_l2"]
        ours_vs_fp64 = metrics(ours, io["logits_fp64"])["rel_l2"]
        report["torch"] = "scripts/gen-model-references.py's PyTorch fp32 logits"
        report["torch_vs_fp64"] = f"{row['rel_l2']:.3e} (vs fp64 {ours_vs_fp64:.3e}; PyTorch fp32 vs fp64 {torch_vs_fp64:.3e})"
        # The bar of gpu_models_test: 1e-5, or as close to fp64 as PyTorch fp32 itself where that is above it.
        bar = max(1e-5, torch_vs_fp64)
        report["torch_verdict"] = (f"rel L2 vs fp64 <= max(1e-5, PyTorch's own) = {bar:.3e}: "
                                   + ("pass" if ours_vs_fp64 <= bar else "FAIL"))
    except Exception as e:  # noqa: BLE001 -- recorded, the engine rows still run
        row = {"name": "fp32 engine vs PyTorch fp32", "error": f"{type(e).__name__}: {e}"}
    report["rows"].append(row)

    try:
        reference, seconds = cli.run("fp32", "resnet50", work / "eval.npz", work / "fp32.npz")
    except RuntimeError as e:  # every row compares with it
        report["rows"].append({"name": "fp32", "graph": "resnet50", "error": str(e)})
        print(write(args.out, report))
        return 1
    print(f"fp32 engine: {reference.shape} in {seconds:.1f} s", flush=True)

    def on_row(row):
        report["rows"].append(row)
        write(args.out, report)
        print(f"{row['name']}: " + (row.get("error") or f"rel L2 {row['rel_l2']:.3e}, top-1 changed "
                                                         f"{row['top1_changed']} / {args.images}"), flush=True)

    rows = plan_rows("resnet50", args.precisions, args.methods, args.fp16_between)
    table = Table(cli, work, "resnet50", batches)
    table.run_rows(rows, work / "eval.npz", lambda out: metrics(out, reference), on_row)
    if args.time:
        report["latency_ms"] = table.latencies(rows, work / "eval.npz", MAX_BATCH)

    text = write(args.out, report)
    print(text)
    return 0 if all("error" not in r for r in report["rows"]) else 1


if __name__ == "__main__":
    sys.exit(main())
