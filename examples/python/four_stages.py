#!/usr/bin/env python3
"""The four stages of the optimization workflow (docs/workflow.md) in Python, end
to end, for tinynet (its graph defined in Python: tinynet.py) on the committed fixture: the
inputs and PyTorch's fp32 outputs of tests/fixtures/examples/tinynet/io.safetensors.

    .venv/bin/python examples/python/four_stages.py                  # cpu backend
    python3 examples/python/four_stages.py --backend cuda --arch sm_90  # a GPU build of the package

1. fp32 engine vs the fixed PyTorch reference (examples/tinynet/limits.json);
2. fp16 and bf16 candidates vs the accepted fp32 engine's outputs, by quality;
3. a replacement, re-gated through stages 1 and 2: here a layer composition (softmax written as
   exp / sum / div); a plugin replacement needs a plugin library (Network.plugin and plugins=,
   docs/python.md "Plugins"), which tinynet has none of, so only the cubin bundle such a plugin
   would ship is compiled and inspected (tensoracle.producer / tensoracle.bundle);
4. each accepted candidate timed against the fp32 engine, interleaved, with a confidence interval
   on the ratio and a check that nothing else loaded the machine (tensoracle.bench.bench_ab); a
   candidate is used only when it surely meets the speed target, otherwise the fp32 engine stays.
Exit status 0 when stage 1 passes (later stages keep the accepted implementation when a candidate
fails), 1 when it does not."""

import argparse
import pathlib
import shutil
import sys
import tempfile

import numpy as np

import tensoracle
from tensoracle import bench, bundle, producer

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
import tinynet  # noqa: E402 (beside this script)

FIXTURE = REPO / "tests" / "fixtures" / "examples" / "tinynet"
STAGE1_LIMITS = REPO / "examples" / "tinynet" / "limits.json"
# Stage 2's limits, chosen for a 10-class softmax: model-independent ones, and the model-specific
# top-1 agreement (computed by top1_agreement below) must be complete.
STAGE2_LIMITS = {"default": {"max_abs_error": 2e-2, "max_rel_l2_error": 2e-2, "min_cosine_similarity": 0.999,
                             "metrics": {"psnr": {"min": 30}, "top1": {"min": 1.0}}}}


def engine_for(name, graph, backend):
    build = tensoracle.EngineBuild(name=name, graph=graph, graph_version="1", weights=FIXTURE / "weights.safetensors",
                                   inputs={"image": tensoracle.ShapeRange((1, 3, 16, 16), (2, 3, 16, 16), (8, 3, 32, 32))},
                                   backend=backend, quiet=True)
    opened = tensoracle.open_engine(build)
    print(f"  {name}: {'cache hit' if opened.cache_hit else f'built in {opened.build_seconds * 1e3:.1f} ms'} "
          f"(key {opened.key[:12]})")
    return opened.engine


def run(engine, image):
    return engine.create_execution().run({"image": image})


def top1_agreement(candidate, reference):
    """A model-specific measure, the application's own: the share of rows whose top-1 class agrees."""
    return float(np.mean(np.argmax(candidate, axis=-1) == np.argmax(reference, axis=-1)))


def stage1(name, graph, backend, io):
    engine = engine_for(name, graph, backend)
    outputs = run(engine, io["image"])
    result = tensoracle.compare_outputs(outputs, {"probs": io["probs"]}, limits=STAGE1_LIMITS)
    print(result.table(), end="")
    return engine, outputs, result.passed


def stage2(name, graph, backend, io, accepted_outputs):
    engine = engine_for(name, graph, backend)
    outputs = run(engine, io["image"])
    result = tensoracle.compare_outputs(outputs, accepted_outputs, limits=STAGE2_LIMITS,
                                        custom_metrics={"top1": top1_agreement})
    print(result.table(), end="")
    print(f"  {name}: {'accepted' if result.passed else 'rejected: ' + '; '.join(result.reasons)}")
    return engine, result.passed


def stage3_bundle(arch):
    """The cubin bundle a plugin would ship, compiled and inspected; None without nvcc."""
    if shutil.which("nvcc") is None:
        print("  no nvcc: bundle not compiled")
        return None
    example = REPO / "examples" / "bundle_example"
    with tempfile.TemporaryDirectory() as scratch:
        out = pathlib.Path(scratch) / "bundle"
        producer.compile_bundle(name="example", version="1.0.0", architectures=[arch], out=out,
                                sources=[example / "kernels" / "elementwise.cu", example / "kernels" / "binary.cu"])
        declaration = {"name": "gated_scale", "version": "1.0.0", "namespace": "example",
                       "inputs": [{"name": "x"}, {"name": "gate"}], "outputs": [{"name": "y"}],
                       "kernels": ["scale_bias", "gated_residual"], "architectures": [arch]}
        report = bundle.inspect_bundle(out, plugin=declaration)
    print(f"  bundle inspection: {len(report.checks)} checks, {len(report.failures)} failed")
    return report.passed


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--arch", default="sm_90", help="architecture of the stage-3 bundle")
    parser.add_argument("--iterations", type=int, default=50, help="stage 4: timed runs per engine")
    parser.add_argument("--speed-target", type=float, default=1.1,
                        help="stage 4: the speed-up over the fp32 baseline a candidate must reach (default 1.1)")
    args = parser.parse_args()
    io = tensoracle.read_arrays(FIXTURE / "io.safetensors")

    print("== stage 1: fp32 engine vs the fixed PyTorch fp32 reference")
    baseline, fp32_outputs, passed = stage1("tinynet_py", tinynet.graph("fp32"), args.backend, io)
    if not passed:
        print("stage 1 failed: correct the graph or the inputs before trying lower precision")
        return 1
    accepted = {"fp32": baseline}

    print("== stage 2: lower precision vs the accepted fp32 engine")
    for dtype in ("fp16", "bf16"):
        engine, passed = stage2(f"tinynet_py_{dtype}", tinynet.graph(dtype), args.backend, io, fp32_outputs)
        if passed:
            accepted[dtype] = engine

    print("== stage 3: a replacement, re-gated through stages 1 and 2")
    replaced, _, passed = stage1("tinynet_py_composed_softmax", tinynet.graph("fp32", composed_softmax=True),
                                 args.backend, io)
    print(f"  composed softmax: {'accepted' if passed else 'rejected, keeping the fp32 engine'}")
    if passed:
        accepted["fp32 composed softmax"] = replaced
    bundle_passed = stage3_bundle(args.arch)
    if bundle_passed is not None:
        print(f"  plugin bundle: {'inspections pass' if bundle_passed else 'inspections fail'}; tinynet has no "
              "plugin library, so no plugin engine is built")

    print(f"== stage 4: each accepted candidate against the fp32 engine, interleaved, batch 8 ({args.backend})")
    image = np.random.default_rng(0).normal(size=(8, 3, 32, 32)).astype(np.float32)
    settings = bench.BenchSettings()
    settings.modes, settings.warmup, settings.iterations = ["latency"], 3, args.iterations
    chosen, best = "fp32", 1.0
    for name, engine in accepted.items():
        if engine is baseline:
            continue
        report = bench.bench_ab(engine, baseline, {"image": image}, settings)
        [run] = report.runs  # ratio = median(candidate) / median(baseline), with its 95% interval
        speedup, sure = 1 / run.ratio.estimate, 1 / run.ratio.high
        if not report.valid:
            print(f"  {name:>22}: not timed in isolation ({'; '.join(report.load.invalid_reasons)}): keeping the baseline")
            continue
        meets = sure >= args.speed_target
        print(f"  {name:>22}: {run.candidate.stats.median_ms:8.3f} ms vs {run.baseline.stats.median_ms:8.3f} ms, "
              f"{speedup:.2f}x (at least {sure:.2f}x: {'meets' if meets else 'misses'} the {args.speed_target:.2f}x target)")
        if meets and speedup > best:
            chosen, best = name, speedup
    print(f"== decision: {chosen}" + ("" if chosen == "fp32" else f" ({best:.2f}x the fp32 baseline, every gate passed)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
