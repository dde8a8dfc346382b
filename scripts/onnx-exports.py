#!/usr/bin/env python3
"""Real torch.onnx exports through tensoracle's ONNX importer, checked against PyTorch and onnxruntime.

For each model, seeded (nothing is downloaded) and in eval mode, the script
  1. exports it with torch.onnx.export at --batch (the TorchScript exporter, dynamo=False, at
     --opset 17 by default: LayerNormalization is an op from 17 on; --exporter dynamo for the
     other one) and lists with `tensoracle onnx check` what the importer refuses in it, if anything;
  2. computes PyTorch's fp32 outputs (on CUDA with TF32 off when there is a GPU), fp64 outputs (on
     the CPU: the noise floor of the fp32 bar) and onnxruntime's (CPU) on the same inputs;
  3. builds the model with `tensoracle build --onnx` in fp32 and with `--precision fp16`, runs each
     engine with `tensoracle run --engine`, and counts its layers with `tensoracle inspect`;
  4. compares each engine with PyTorch fp32, onnxruntime and fp64, and the fp16 engine with the
     fp32 one: rel L2 = ||a - b|| / ||b||, max |a - b| and cosine.

  resnet50, mobilenet_v3_large, efficientnet_b0, vit_b_16
              torchvision (weights=None); input "image" fp32 N(0, 1) [N, 3, 224, 224], output "logits"
  bert_base   transformers BertModel(BertConfig()) (bert-base, eager attention); inputs "input_ids"
              int64 [N, --seq] in [1, vocab) and "attention_mask" int64, the last sequence padded
              (mask 0, token 0) over its last quarter; output "last_hidden_state"

A freshly initialized model has identity norms, zero biases and (ViT) a zero classifier, which
would hide a dropped or swapped parameter: after the seeded init, norm scales and shifts, Linear
biases and all-zero Linear weights get seeded values, and batch norms keep the running statistics
of one seeded batch (activations stay O(1), so the fp16 engines stay in range).

The fp32 bar (issue 18): rel L2 vs PyTorch fp32 <= 1e-5, where PyTorch fp32 is itself within 1e-5
of fp64; the table says whether it applies and whether it is met.

With --time, ResNet-50 and BERT are exported again at batch 32, built fp16 (fp32 I/O) and timed
against the hand-written graphs of examples/ (resnet50_fp16, bert_encoder_fp16: the same weights,
the same inputs, batch 32) with `tensoracle bench --engine IMPORTED --baseline HAND_WRITTEN`: the
ratio of medians imported / hand-written with its 95% interval (1 within it: the same speed), and
each engine's layer count from `tensoracle inspect` (layers an importer leaves behind show there).
--time-only does that alone (no accuracy engines or references), so that BERT's timing, which
builds two engines of its own, fits one 10-minute device call with the build before it.

Each model is independent: a failure (export, refused import, build) is recorded with its message
and the script goes on. It prints a markdown table and writes onnx-exports.{md,json} into
--report (default OUT) after each model; the exported models, inputs, outputs and engines
(TENSORACLE_CACHE_DIR=OUT/cache, so a second run reuses them) stay under OUT.

On the GPU machine, after `scripts/gpu-check --only build` (scripts/gpu-check --only onnx runs it):
    scripts/onnx-exports.py --cli build/gpu/tools/tensoracle/tensoracle --out /tmp/onnx-exports --time
A check of the whole path without a GPU (torch, torchvision, transformers, onnxruntime installed):
    scripts/onnx-exports.py --cli build/release/tools/tensoracle/tensoracle --out /tmp/onnx-exports \\
        --backend cpu --models resnet50,bert_base --batch 1 --seq 32
"""
import argparse
import collections
import copy
import json
import math
import os
import subprocess
import sys
import time
from importlib import metadata

import numpy as np
import onnxruntime
import torch
from torch import nn

IMAGE_MODELS = ("resnet50", "mobilenet_v3_large", "efficientnet_b0", "vit_b_16")
MODELS = IMAGE_MODELS + ("bert_base",)
# Model -> (example package, its hand-written fp16 graph) for --time.
HAND_WRITTEN = {"resnet50": ("resnet50", "resnet50_fp16"), "bert_base": ("bert_encoder", "bert_encoder_fp16")}
TIME_BATCH = 32
PACKAGES = ("torch", "torchvision", "transformers", "onnx", "onnxruntime")
FP32_BAR = 1e-5


class StepFailed(Exception):
    pass


def log(model, text):
    print(f"[{model}] {text}", flush=True)


def nontrivial_parameters(model, gen, calibration=None):
    """Seeded values where a fresh init leaves identities or zeros (module docstring)."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.BatchNorm2d, nn.LayerNorm)) and m.weight is not None:
                m.weight.copy_(torch.rand(m.weight.shape, generator=gen) + 0.5)
                m.bias.copy_(torch.rand(m.bias.shape, generator=gen) - 0.5)
            if isinstance(m, nn.Linear):
                if not m.weight.any():
                    m.weight.copy_(torch.randn(m.weight.shape, generator=gen) / math.sqrt(m.in_features))
                if m.bias is not None:
                    m.bias.copy_((torch.rand(m.bias.shape, generator=gen) - 0.5) * 0.2)
        norms = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
        if norms and calibration is not None:
            # Train mode with a cumulative average over one batch stores exactly its statistics.
            for m in norms:
                m.reset_running_stats()
                m.momentum = None
            model.train()(calibration)
    return model.eval()


class LastHiddenState(nn.Module):
    """BertModel's last_hidden_state as a plain tensor-in, tensor-out module. Without token type
    ids, as a user calls it: BertModel then gathers its default zeros from a buffer by position
    (GatherElements)."""

    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids, attention_mask):
        return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


def make_model(name, args):
    """(module to export, module whose state_dict the hand-written graph reads, output name)."""
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    if name == "bert_base":
        from transformers import BertConfig, BertModel

        config = BertConfig(num_hidden_layers=args.bert_layers)
        config._attn_implementation = "eager"
        bert = nontrivial_parameters(BertModel(config), gen)
        return LastHiddenState(bert).eval(), bert, "last_hidden_state"
    import torchvision

    model = getattr(torchvision.models, name)(weights=None)
    nontrivial_parameters(model, gen, calibration=torch.randn(8, 3, 224, 224, generator=gen))
    return model, model, "logits"


def make_inputs(name, batch, args):
    gen = torch.Generator().manual_seed(2)
    if name != "bert_base":
        return {"image": torch.randn(batch, 3, 224, 224, generator=gen)}
    ids = torch.randint(1, 30522, (batch, args.seq), generator=gen)
    mask = torch.ones(batch, args.seq, dtype=torch.int64)
    pad = args.seq - args.seq // 4
    mask[-1, pad:] = 0
    ids[-1, pad:] = 0
    return {"input_ids": ids, "attention_mask": mask}


def torch_output(model, inputs, device, dtype):
    m = copy.deepcopy(model).to(device=device, dtype=dtype)
    feed = [t.to(device=device, dtype=dtype) if t.is_floating_point() else t.to(device) for t in inputs.values()]
    with torch.no_grad():
        return m(*feed).cpu().numpy()


def export(model, inputs, output_name, path, args):
    torch.onnx.export(model, tuple(inputs.values()), path, input_names=list(inputs), output_names=[output_name],
                      opset_version=args.opset, dynamo=args.exporter == "dynamo")


def tensoracle(args, *argv, ok=(0,)):
    """Runs the CLI with the cache under OUT; raises StepFailed with its error on another exit status."""
    env = dict(os.environ, TENSORACLE_CACHE_DIR=os.path.join(args.out, "cache"))
    proc = subprocess.run([args.cli, *argv], capture_output=True, text=True, env=env)
    if proc.returncode not in ok:
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        raise StepFailed(f"tensoracle {argv[0]} exit {proc.returncode}: {lines[-1] if lines else proc.stdout[-300:]}")
    return proc


def build(args, *source):
    """Builds through the cache; returns (engine path, build seconds)."""
    result = json.loads(tensoracle(args, "build", *source, "--quiet", "--json").stdout)
    return result["engine_path"], result["build_seconds"]


def layers_of(args, engine):
    """The engine's layer count and its layers per kind (after fusion)."""
    layers = json.loads(tensoracle(args, "inspect", engine, "--json").stdout)["layers"]
    return len(layers), dict(collections.Counter(layer.get("kind", "?") for layer in layers))


def onnx_check(args, path):
    """The model's op counts; raises StepFailed naming the refused nodes (those refused for reading
    a refused node's output are only counted)."""
    report = json.loads(tensoracle(args, "onnx", "check", path, "--json", ok=(0, 1)).stdout)
    refused = [n for n in report["nodes"] if not n["supported"]]
    causes = [f"{n['name']} ({n['op_type']}): {n['reason']}" for n in refused if "of the refused node" not in n["reason"]]
    if refused or report["model_problems"]:
        raise StepFailed(f"import refused ({len(refused)} of {len(report['nodes'])} nodes): " +
                         "; ".join(report["model_problems"] + causes))
    return {op: c["supported"] for op, c in report["ops"].items()}


def metrics(a, b):
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    return {"rel_l2": float(np.linalg.norm(a - b) / np.linalg.norm(b)), "max_abs": float(np.max(np.abs(a - b))),
            "cosine": float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))}


def check_model(name, args, device):
    record = {"model": name, "exporter": args.exporter, "opset": args.opset, "batch": args.batch}
    started = time.time()
    folder = os.path.join(args.out, name)
    os.makedirs(folder, exist_ok=True)
    try:
        model, state_module, output_name = make_model(name, args)
        inputs = make_inputs(name, args.batch, args)
        inputs_path = os.path.join(folder, "inputs.npz")
        np.savez(inputs_path, **{k: v.numpy() for k, v in inputs.items()})
        if args.time_only:
            return with_timing(record, name, model, state_module, output_name, inputs_path, args, started)
        path = os.path.join(folder, f"{name}.onnx")
        export(model, inputs, output_name, path, args)
        log(name, f"exported ({time.time() - started:.1f} s)")
        record["onnx_ops"] = onnx_check(args, path)
        fp32 = torch_output(model, inputs, device, torch.float32)
        fp64 = torch_output(model, inputs, "cpu", torch.float64)
        session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
        ort = session.run(None, {k: v.numpy() for k, v in inputs.items()})[0]
        record["torch_fp32_vs_fp64"] = metrics(fp32, fp64)
        record["ort_vs_torch_fp32"] = metrics(ort, fp32)
        log(name, f"references: PyTorch fp32 ({device}), fp64 (cpu), onnxruntime (cpu) ({time.time() - started:.1f} s)")
    except Exception as error:  # a model that cannot be exported or imported is a result, not a crash
        record["error"] = f"{type(error).__name__}: {error}" if not isinstance(error, StepFailed) else str(error)
        log(name, f"FAILED: {record['error']}")
        return record
    record["engines"] = {}
    for precision in ("fp32", "fp16"):
        engine = record["engines"][precision] = {}
        try:
            engine_path, engine["build_seconds"] = build(args, "--onnx", path, "--backend", args.backend,
                                                         "--precision", precision)
            engine["layers"], engine["layer_kinds"] = layers_of(args, engine_path)
            outputs_path = os.path.join(folder, f"outputs_{precision}.npz")
            tensoracle(args, "run", "--engine", engine_path, "--inputs", inputs_path, "--outputs", outputs_path)
            with np.load(outputs_path) as outputs:
                ours = outputs[output_name]
            engine["vs_torch_fp32"] = metrics(ours, fp32)
            engine["vs_ort"] = metrics(ours, ort)
            engine["vs_fp64"] = metrics(ours, fp64)
            if precision == "fp16" and "vs_torch_fp32" in record["engines"]["fp32"]:
                engine["vs_fp32_engine"] = metrics(ours, np.load(os.path.join(folder, "outputs_fp32.npz"))[output_name])
            log(name, f"{precision}: built in {engine['build_seconds']:.1f} s, {engine['layers']} layers, rel L2 vs "
                      f"PyTorch fp32 {engine['vs_torch_fp32']['rel_l2']:.3g}")
        except StepFailed as error:
            engine["error"] = str(error)
            log(name, f"{precision} FAILED: {error}")
    return with_timing(record, name, model, state_module, output_name, inputs_path, args, started)


def with_timing(record, name, model, state_module, output_name, inputs_path, args, started):
    """`record` with the imported-vs-hand-written timing where --time asks for it."""
    if args.time and name in HAND_WRITTEN:
        try:
            record["timing"] = time_against_hand_written(name, model, state_module, output_name, inputs_path, args)
        except Exception as error:  # the accuracy results (if any) stand without the timing
            record["timing"] = {"error": str(error)}
            log(name, f"timing FAILED: {error}")
    record["seconds"] = round(time.time() - started, 1)
    return record


def time_against_hand_written(name, model, state_module, output_name, inputs_path, args):
    """bench --engine IMPORTED --baseline HAND_WRITTEN at batch 32, both fp16 with fp32 I/O."""
    from safetensors.torch import save_file

    folder = os.path.join(args.out, name)
    inputs = make_inputs(name, TIME_BATCH, args)
    path = os.path.join(folder, f"{name}_b{TIME_BATCH}.onnx")
    export(model, inputs, output_name, path, args)
    imported, _ = build(args, "--onnx", path, "--backend", args.backend, "--precision", "fp16")
    # The hand-written graph reads the same weights by their state_dict names (floating point only:
    # integer buffers such as BERT's position ids are not weights).
    weights = os.path.join(folder, "weights.safetensors")
    save_file({k: v.detach().contiguous().clone() for k, v in state_module.state_dict().items() if v.is_floating_point()},
              weights)
    package, graph = HAND_WRITTEN[name]
    shapes = [arg for k, v in inputs.items() for arg in ("--input", f"{k}:{'x'.join(map(str, v.shape))}")]
    hand, _ = build(args, "--package", os.path.join(args.examples, f"libtensoracle_example_{package}.so"), "--graph",
                    graph, "--weights", weights, "--backend", args.backend, *shapes)
    log(name, f"timing imported vs {graph} at batch {TIME_BATCH}")
    # Exit 1: the run was invalid (load present); its JSON says so and is kept.
    report = json.loads(tensoracle(args, "bench", "--engine", imported, "--baseline", hand, "--inputs", inputs_path,
                                   "--batch", str(TIME_BATCH), "--json", ok=(0, 1)).stdout)
    if "runs" not in report:
        raise StepFailed(f"tensoracle bench: {report.get('error', report)}")
    timing = {"hand_written": graph, "batch": TIME_BATCH, "valid": report["valid"],
              "invalid_reasons": report.get("load_check", {}).get("invalid_reasons", []), "modes": {}}
    for run in report["runs"]:
        r = run["ratio"]
        timing["modes"][run["mode"]] = {"imported_median_ms": run["candidate"]["stats"]["median_ms"],
                                        "hand_written_median_ms": run["baseline"]["stats"]["median_ms"],
                                        "ratio": r["estimate"], "low": r["low"], "high": r["high"]}
    timing["imported_layers"], timing["imported_layer_kinds"] = layers_of(args, imported)
    timing["hand_written_layers"], timing["hand_written_layer_kinds"] = layers_of(args, hand)
    return timing


def fmt(value, spec=".2e"):
    return "-" if value is None else format(value, spec)


def markdown(records, args, device):
    versions = ", ".join(f"{p} {metadata.version(p)}" for p in PACKAGES)
    lines = [f"ONNX exports: {args.exporter} exporter, opset {args.opset}, batch {args.batch}, tensoracle --backend "
             f"{args.backend}, PyTorch fp32 on {device}; {versions}.",
             "", "| model | engine | layers | build s | rel L2 vs PyTorch fp32 | max abs | cosine | rel L2 vs ORT | "
                 "rel L2 vs fp64 | vs our fp32 | PyTorch fp32 vs fp64 | ORT vs PyTorch | fp32 bar 1e-5 |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    failures = []
    for r in records:
        if "error" in r:
            lines.append(f"| {r['model']} | - | | | | | | | | | | | failed |")
            failures.append(f"- {r['model']}: {r['error']}")
            continue
        if "torch_fp32_vs_fp64" not in r:  # --time-only: no accuracy engines
            continue
        floor = r["torch_fp32_vs_fp64"]["rel_l2"]
        for precision, e in r["engines"].items():
            if "error" in e:
                lines.append(f"| {r['model']} | {precision} | | | | | | | | | | | failed |")
                failures.append(f"- {r['model']} {precision}: {e['error']}")
                continue
            rel = e["vs_torch_fp32"]["rel_l2"]
            bar = ""
            if precision == "fp32":
                bar = ("met" if rel <= FP32_BAR else "NOT met") if floor <= FP32_BAR else "n/a (PyTorch fp32 vs fp64 above 1e-5)"
            lines.append(
                f"| {r['model']} | {precision} | {e['layers']} | {e['build_seconds']:.1f} | {fmt(rel)} | "
                f"{fmt(e['vs_torch_fp32']['max_abs'])} | {e['vs_torch_fp32']['cosine']:.7f} | {fmt(e['vs_ort']['rel_l2'])} | "
                f"{fmt(e['vs_fp64']['rel_l2'])} | {fmt(e.get('vs_fp32_engine', {}).get('rel_l2'))} | {fmt(floor)} | "
                f"{fmt(r['ort_vs_torch_fp32']['rel_l2'])} | {bar} |")
    timed = [r for r in records if "timing" in r]
    if timed:
        lines += ["", f"Imported vs hand-written (fp16 layers, fp32 I/O, batch {TIME_BATCH}; ratio of medians "
                      "imported / hand-written with its 95% interval):", "",
                  "| model | hand-written graph | mode | imported ms | hand-written ms | ratio [95% CI] | layers imported / "
                  "hand-written | valid |", "|---|---|---|---:|---:|---|---|---|"]
        for r in timed:
            t = r["timing"]
            if "error" in t:
                lines.append(f"| {r['model']} | | | | | | | failed |")
                failures.append(f"- {r['model']} timing: {t['error']}")
                continue
            for mode, m in t["modes"].items():
                lines.append(f"| {r['model']} | {t['hand_written']} | {mode} | {m['imported_median_ms']:.4f} | "
                             f"{m['hand_written_median_ms']:.4f} | {m['ratio']:.4f} [{m['low']:.4f}, {m['high']:.4f}] | "
                             f"{t['imported_layers']} / {t['hand_written_layers']} | {t['valid']} |")
            if t.get("invalid_reasons"):
                failures.append(f"- {r['model']} timing invalid: {'; '.join(t['invalid_reasons'])}")
    if failures:
        lines += ["", "Failures:", ""] + failures
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", required=True, help="the tensoracle executable")
    parser.add_argument("--out", required=True, help="folder for the models, inputs, outputs and engines")
    parser.add_argument("--report", default="", help="folder for onnx-exports.{md,json} (default: --out)")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated subset of " + ", ".join(MODELS))
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--seq", type=int, default=128, help="BERT's sequence length")
    parser.add_argument("--bert-layers", type=int, default=12, help="BERT's encoder layers (fewer for a quick check)")
    parser.add_argument("--backend", default="cuda", help="tensoracle's backend (cpu: a check without a GPU)")
    parser.add_argument("--exporter", default="torchscript", choices=("torchscript", "dynamo"))
    parser.add_argument("--opset", type=int, default=20)
    parser.add_argument("--time", action="store_true", help="time imported ResNet-50 and BERT against examples/")
    parser.add_argument("--time-only", action="store_true",
                        help="--time without the accuracy part (no fp32/fp16 engines, no PyTorch or onnxruntime "
                             "references): the timing of a model fits one device call")
    parser.add_argument("--examples", default="",
                        help="folder of the example packages (default: the CLI's build folder's examples/)")
    args = parser.parse_args()
    args.out = os.path.abspath(args.out)
    args.time = args.time or args.time_only
    report = args.report or args.out
    args.examples = args.examples or os.path.join(os.path.dirname(os.path.abspath(args.cli)), "..", "..", "examples")
    names = args.models.split(",")
    if unknown := [n for n in names if n not in MODELS]:
        sys.exit(f"unknown model(s) {unknown}: choose from {', '.join(MODELS)}")
    if args.time and (args.seq != 128 or args.bert_layers != 12):
        sys.exit("--time compares with the hand-written graphs: keep --seq 128 and --bert-layers 12")
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(report, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    # With --time the references run on the cpu: a CUDA context held by this process would be another
    # process on the GPU to bench's load check, which then marks every timing invalid.
    device = "cuda" if torch.cuda.is_available() and not args.time else "cpu"
    started = time.time()
    records = []
    for name in names:
        records.append(check_model(name, args, device))
        # Written after each model, so a run stopped by a time limit keeps what it measured.
        table = markdown(records, args, device)
        with open(os.path.join(report, "onnx-exports.md"), "w", encoding="utf-8") as f:
            f.write(table)
        with open(os.path.join(report, "onnx-exports.json"), "w", encoding="utf-8") as f:
            json.dump({"command": " ".join(sys.argv), "versions": {p: metadata.version(p) for p in PACKAGES},
                       "device": device, "seconds": round(time.time() - started, 1), "models": records}, f, indent=2)
    print("\n" + table, flush=True)
    print(f"done in {time.time() - started:.1f} s: {report}/onnx-exports.md, onnx-exports.json", flush=True)
    return 1 if any("error" in r or any("error" in e for e in r.get("engines", {}).values()) for r in records) else 0


if __name__ == "__main__":
    sys.exit(main())
