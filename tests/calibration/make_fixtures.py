#!/usr/bin/env python3
"""Makes the calibration cross-check fixtures (tests/fixtures/calibration/).

A small ONNX model (conv -> relu -> conv), three batches of inputs with heavy tails (so the
methods disagree), and expected.json holding:
  "model": for the tensors calibrated (the input, a one-sided and a two-sided activation),
    - "onnxruntime": the thresholds of onnxruntime.quantization's MinMax, Percentile and Entropy
      calibrators (symmetric) on the same batches;
    - "numpy": the thresholds of tensoracle's own definitions (include/tensoracle/calibrate.h)
      computed here with numpy: max, percentile, entropy (TensorRT's KL search) and mse (which
      onnxruntime has no calibrator for), plus the per-channel max of the first conv's weight.
    Inputs and weights are small multiples of powers of two, so every activation is exact in
    fp32 whatever the summation order: onnxruntime and tensoracle see the same values bit for bit.
  "large_sample": 2 million samples of the same heavy-tailed law, too many to commit, kept as
    their |x| histogram (tensoracle's binning) beside onnxruntime's entropy and percentile
    thresholds of the samples themselves: on the model's 20 thousand values both entropy searches
    follow the noise of a sparse histogram and land far apart; here they agree within 2%.
tests/host/calibrate/ort_crosscheck_test.cpp runs tensoracle's calibrate on the same files and
compares with both (docs/quantization.md says how close each must be, and why).

Run from the repository root with the set-up .venv:
  .venv/bin/python tests/calibration/make_fixtures.py
"""
import json
import os
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import calibrate as ort_calibrate

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "calibration")
TENSORS = ["x", "relu1", "conv2"]  # the input, a one-sided and a two-sided activation
NUM_BINS = 2048
PERCENTILE = 99.9
KL_BINS = 128
BATCH, SIZE = 8, 16  # per input file


def on_grid(values, steps_per_unit):
    """Rounded to multiples of 1/steps_per_unit: the convolutions' sums are then exact in fp32."""
    return (np.round(values * steps_per_unit) / steps_per_unit).astype(np.float32)


def heavy_tailed(rng, shape):
    x = rng.standard_normal(shape)
    x[rng.random(shape) < 0.01] *= 8.0  # a heavy tail: max, percentile and entropy disagree
    return x


def make_model(rng):
    w1 = on_grid(rng.standard_normal((4, 3, 3, 3)) * 0.4, 16)
    w1[2] *= 3.0  # channels of different ranges: per-channel scales differ
    b1 = on_grid(rng.standard_normal(4) * 0.1, 16)
    w2 = on_grid(rng.standard_normal((5, 4, 3, 3)) * 0.3, 4)
    b2 = on_grid(rng.standard_normal(5) * 0.1, 16)
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["conv1"], pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("Relu", ["conv1"], ["relu1"], name="relu1"),
        helper.make_node("Conv", ["relu1", "w2", "b2"], ["conv2"], pads=[1, 1, 1, 1], name="conv2"),
    ]
    graph = helper.make_graph(
        nodes, "calibration_net",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [BATCH, 3, SIZE, SIZE])],
        [helper.make_tensor_value_info("conv2", TensorProto.FLOAT, [BATCH, 5, SIZE, SIZE]),
         helper.make_tensor_value_info("relu1", TensorProto.FLOAT, [BATCH, 4, SIZE, SIZE])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
         numpy_helper.from_array(w2, "w2"), numpy_helper.from_array(b2, "b2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="make_fixtures.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model, w1


def make_batches(rng):
    batches = []
    for _ in range(3):
        batches.append(on_grid(heavy_tailed(rng, (BATCH, 3, SIZE, SIZE)), 8))
    return batches


class Reader(ort_calibrate.CalibrationDataReader):
    def __init__(self, batches):
        self.batches = iter(batches)

    def get_next(self):
        x = next(self.batches, None)
        return None if x is None else {"x": x}


def ort_thresholds(model_path, batches, method, extra):
    with tempfile.TemporaryDirectory() as tmp:
        calibrator = ort_calibrate.create_calibrator(
            model_path, op_types_to_calibrate=None,
            augmented_model_path=os.path.join(tmp, "augmented.onnx"),
            calibrate_method=method, extra_options=dict(symmetric=True, **extra))
        calibrator.collect_data(Reader(batches))
        data = calibrator.compute_data()
    return {name: float(np.asarray(data[name].range_value[1]).reshape(-1)[0]) for name in TENSORS}


# ---- tensoracle's definitions (calibrate.h), in numpy ----

def abs_histogram(values):
    """|x| in NUM_BINS bins over [0, amax]: bin floor(|x| / amax * bins), amax in the last."""
    a = np.abs(values.astype(np.float64))
    amax = float(a.max())
    index = np.minimum(NUM_BINS - 1, np.floor(a / amax * NUM_BINS).astype(np.int64))
    return np.bincount(index, minlength=NUM_BINS).astype(np.int64), amax


def percentile_threshold(hist, amax):
    cumulative = np.cumsum(hist)
    i = int(np.argmax(cumulative >= PERCENTILE / 100.0 * cumulative[-1]))
    return min(amax, (i + 1) * amax / NUM_BINS)


def smooth(d, eps=1e-4):
    zeros = d == 0
    n_zeros, n_nonzeros = int(zeros.sum()), int(d.size - zeros.sum())
    if n_nonzeros == 0 or eps * n_zeros / n_nonzeros >= 1.0:
        return None
    return np.where(zeros, eps, d - eps * n_zeros / n_nonzeros)


def entropy_threshold(hist, amax):
    best, best_kl = NUM_BINS, np.inf
    for i in range(KL_BINS, NUM_BINS + 1):
        p = hist[:i].astype(np.float64)
        p[i - 1] += hist[i:].sum()
        q = np.zeros(i)
        merged = i // KL_BINS
        for g in range(KL_BINS):
            start, end = g * merged, (i if g == KL_BINS - 1 else (g + 1) * merged)
            nonzero = p[start:end] != 0
            if nonzero.any():
                q[start:end][nonzero] = hist[start:end].sum() / nonzero.sum()
        ps, qs = smooth(p), smooth(q)
        if ps is None or qs is None:
            continue
        ps, qs = ps / ps.sum(), qs / qs.sum()
        kl = float(np.sum(ps * np.log(ps / qs)))
        if kl < best_kl:
            best, best_kl = i, kl
    return best * amax / NUM_BINS


def fake_quant_int8(v, scale):
    s = np.float32(scale)
    q = np.clip(np.round(v.astype(np.float32) / s), -128, 127).astype(np.float32)
    return (q * s).astype(np.float64)


def mse_threshold(hist, amax):
    w = amax / NUM_BINS
    centres = (np.arange(NUM_BINS) + 0.5) * w
    best, best_error = amax, np.inf
    for i in range(1, NUM_BINS + 1):
        t = i * w
        error = float(np.sum(hist * (centres - fake_quant_int8(centres, t / 127.0)) ** 2))
        if error < best_error:
            best, best_error = t, error
    return best


def large_sample(rng):
    samples = heavy_tailed(rng, 2_000_000).astype(np.float32)
    hist, amax = abs_histogram(samples)
    collector = ort_calibrate.HistogramCollector("entropy", True, 2 * NUM_BINS, 2 * KL_BINS, PERCENTILE, None)
    collector.collect({"t": [samples]})
    ort_entropy = float(np.asarray(collector.compute_collection_result()["t"][1]).reshape(-1)[0])
    collector = ort_calibrate.HistogramCollector("percentile", True, NUM_BINS, KL_BINS, PERCENTILE, None)
    collector.collect({"t": [samples]})
    ort_percentile = float(np.asarray(collector.compute_collection_result()["t"][1]).reshape(-1)[0])
    return {
        "amax": amax, "histogram": hist.tolist(),
        "numpy": {"entropy": entropy_threshold(hist, amax), "percentile": percentile_threshold(hist, amax),
                  "mse": mse_threshold(hist, amax)},
        "onnxruntime": {"entropy": ort_entropy, "percentile": ort_percentile},
    }


def main():
    rng = np.random.default_rng(20261203)
    model, w1 = make_model(rng)
    batches = make_batches(rng)
    os.makedirs(OUT, exist_ok=True)
    model_path = os.path.join(OUT, "model.onnx")
    onnx.save(model, model_path)
    for n, x in enumerate(batches):
        np.savez(os.path.join(OUT, f"batch{n}.npz"), x=x)

    import onnxruntime
    session = onnxruntime.InferenceSession(model_path, providers=["CPUExecutionProvider"])
    values = {name: [] for name in TENSORS}
    for x in batches:
        conv2, relu1 = session.run(["conv2", "relu1"], {"x": x})
        values["x"].append(x)
        values["relu1"].append(relu1)
        values["conv2"].append(conv2)
    ours = {m: {} for m in ("max", "percentile", "entropy", "mse")}
    for name in TENSORS:
        hist, amax = abs_histogram(np.concatenate([v.ravel() for v in values[name]]))
        ours["max"][name] = amax
        ours["percentile"][name] = percentile_threshold(hist, amax)
        ours["entropy"][name] = entropy_threshold(hist, amax)
        ours["mse"][name] = mse_threshold(hist, amax)
    ours["w1_per_channel_max"] = np.abs(w1).reshape(4, -1).max(axis=1).astype(float).tolist()

    M = ort_calibrate.CalibrationMethod
    ort = {
        "max": ort_thresholds(model_path, batches, M.MinMax, {}),
        # The same bins as ours (2048 over |x|), percentile as ours.
        "percentile": ort_thresholds(model_path, batches, M.Percentile,
                                     {"num_bins": NUM_BINS, "percentile": PERCENTILE}),
        # onnxruntime's histogram is two-sided: 2 * 2048 bins over [-amax, amax] give our bin
        # width, and 2 * 128 quantized bins our 128 levels per side.
        "entropy": ort_thresholds(model_path, batches, M.Entropy,
                                  {"num_bins": 2 * NUM_BINS, "num_quantized_bins": 2 * KL_BINS}),
    }
    expected = {
        "tensors": TENSORS, "num_bins": NUM_BINS, "percentile": PERCENTILE, "kl_bins": KL_BINS,
        "onnxruntime_version": onnxruntime.__version__,
        "model": {"onnxruntime": ort, "numpy": ours},
        "large_sample": large_sample(rng),
    }
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected, f, indent=2, sort_keys=True)
        f.write("\n")
    for method in ("max", "percentile", "entropy"):
        for name in TENSORS:
            print(f"{method:10} {name:6} ours {ours[method][name]:.6f} onnxruntime {ort[method][name]:.6f}")
    for name in TENSORS:
        print(f"{'mse':10} {name:6} ours {ours['mse'][name]:.6f}")
    big = expected["large_sample"]
    for method in ("entropy", "percentile"):
        print(f"large sample {method}: ours {big['numpy'][method]:.6f} onnxruntime {big['onnxruntime'][method]:.6f}")


if __name__ == "__main__":
    main()
