#!/usr/bin/env python3
"""The speed table of docs/models.md: our fp16 engines against PyTorch fp16.

Merges bench/gpu/model_bench's JSON (--ours) and scripts/torch-baseline.py's JSON (--torch) into
one Markdown table: rows resnet50 and bert_encoder at batch 1 and 32; columns our fp16 engine,
PyTorch eager, torch.compile reduce-overhead (and max-autotune when it was timed), each as
"median (p90)" in ms; the ratio ours / best torch.compile (<= 1.0: we are not slower; the
product's goal is <= 1/1.4 = 0.71); and the engine's build time.

    python3 scripts/speed-table.py --ours model_bench.json... --torch torch_baseline.json... [--out table.md]
"""
import argparse
import json
import sys

MODELS = ("resnet50", "bert_encoder")
BATCHES = (1, 32)
COMPILE_MODES = ("reduce-overhead", "max-autotune")
GOAL_SPEEDUP = 1.4


def cell(entry):
    if entry is None:
        return "–"
    return f"{entry['median_ms']:.3f} ({entry['p90_ms']:.3f})"


def table(ours, torch_report):
    torch_runs = {(r["model"], r["batch"], r["mode"]): r for r in torch_report["results"]}
    modes = ["eager"] + [m for m in COMPILE_MODES if any(k[2] == m for k in torch_runs)]
    header = ["model", "batch", "ours fp16"] + [f"torch {m}" for m in modes] + [
        "ours / best compile", "build s"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    worst = None
    for model in MODELS:
        latency = {e["batch"]: e for e in ours.get("models", {}).get(model, {}).get("latency", [])
                   if e.get("precision") == "fp16"}
        for batch in BATCHES:
            mine = latency.get(batch)
            theirs = [torch_runs.get((model, batch, m)) for m in modes]
            compiled = [r["median_ms"] for r in theirs[1:] if r is not None]
            ratio = "–"
            if mine is not None and compiled:
                value = mine["median_ms"] / min(compiled)
                worst = value if worst is None else max(worst, value)
                ratio = f"**{value:.2f}**" if value > 1.0 else f"{value:.2f}"
            build = f"{mine['build_s']:.1f}" if mine is not None else "–"
            lines.append("| " + " | ".join([model, str(batch), cell(mine)] + [cell(r) for r in theirs] +
                                           [ratio, build]) + " |")
    lines.append("")
    lines.append("Latency in ms, median (p90), CUDA events after warm-up; fp16 everywhere.")
    lines.append(f"Torch {torch_report.get('torch', '?')} on {torch_report.get('device', '?')}; "
                 f"ours on {ours.get('device', '?')}.")
    if worst is not None:
        lines.append(f"Worst ratio {worst:.2f} (target <= 1.00; the product's goal, {GOAL_SPEEDUP}x faster, "
                     f"is <= {1 / GOAL_SPEEDUP:.2f}).")
    return "\n".join(lines) + "\n"


def load(paths):
    reports = []
    for path in paths:
        try:
            with open(path) as f:
                reports.append(json.load(f))
        except (OSError, json.JSONDecodeError) as e:
            sys.exit(f"speed-table: {path}: {e}")
    return reports


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ours", required=True, nargs="+",
                        help="bench/gpu/model_bench --json output(s); several (one per model run) are merged")
    parser.add_argument("--torch", required=True, nargs="+", help="scripts/torch-baseline.py --out output(s), merged")
    parser.add_argument("--out", help="write the table here as well as to stdout")
    args = parser.parse_args()
    ours_reports, torch_reports = load(args.ours), load(args.torch)
    ours = dict(ours_reports[0], models={})
    for report in ours_reports:
        ours["models"].update(report.get("models", {}))
    torch_report = dict(torch_reports[0], results=[r for report in torch_reports for r in report.get("results", [])])
    text = table(ours, torch_report)
    sys.stdout.write(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)

if __name__ == "__main__":
    main()
