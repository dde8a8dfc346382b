"""ONNX models whose shape computations read dynamic dims (docs/onnx.md, "Shape computations on
dynamic dims"): the Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains exporters write for a
dynamic batch and sequence. Each model is built with the onnx package, imported and built once by
the CLI with a declared shape range, run at two sizes inside it and compared with onnxruntime."""

import os
import pathlib
import subprocess

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the tests write their models with the onnx package (scripts/setup installs it)")
ort = pytest.importorskip("onnxruntime", reason="onnxruntime is the reference (scripts/setup installs it)")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

RNG = np.random.default_rng(18)
HIDDEN, HEADS = 8, 2


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def size_of(nodes, shape, index):
    """shape[index] as a 1-D value, as torch writes x.size(i): Gather, Unsqueeze."""
    out = f"{shape}_{index}"
    nodes.append(helper.make_node("Gather", [shape, f"i{index}"], [out + "_scalar"], name=f"gather_{out}"))
    nodes.append(helper.make_node("Unsqueeze", [out + "_scalar", "axes0"], [out], name=f"unsqueeze_{out}"))
    return out


def self_attention(path: pathlib.Path) -> pathlib.Path:
    """BERT's self-attention on x of (batch, seq, 8) with 2 heads: q, k, v split into heads with
    view(x.size(0), x.size(1), 2, 4), merged back with view(context.size()[:-2] + (8,))."""
    weights = {n: RNG.standard_normal((HIDDEN, HIDDEN)).astype(np.float32) / 3 for n in ("wq", "wk", "wv")}
    nodes = [helper.make_node("Shape", ["x"], ["sx"], name="shape_x")]
    split = [size_of(nodes, "sx", 0), size_of(nodes, "sx", 1), "head_dims"]
    nodes.append(helper.make_node("Concat", split, ["split"], name="split", axis=0))
    for n in ("q", "k", "v"):
        nodes.append(helper.make_node("MatMul", ["x", f"w{n}"], [n], name=n))
        nodes.append(helper.make_node("Reshape", [n, "split"], [f"{n}4"], name=f"split_{n}"))
        perm = [0, 2, 3, 1] if n == "k" else [0, 2, 1, 3]
        nodes.append(helper.make_node("Transpose", [f"{n}4"], [f"{n}h"], name=f"heads_{n}", perm=perm))
    nodes += [
        helper.make_node("MatMul", ["qh", "kh"], ["scores"], name="scores"),
        helper.make_node("Mul", ["scores", "scale"], ["scaled"], name="scale"),
        helper.make_node("Softmax", ["scaled"], ["probs"], name="softmax", axis=-1),
        helper.make_node("MatMul", ["probs", "vh"], ["ctx"], name="context"),
        helper.make_node("Transpose", ["ctx"], ["context"], name="unheads", perm=[0, 2, 1, 3]),
        helper.make_node("Shape", ["context"], ["sc"], name="shape_context"),
        helper.make_node("Slice", ["sc", "start0", "end2"], ["lead"], name="lead"),
        helper.make_node("Concat", ["lead", "hidden"], ["merged"], name="merged", axis=0),
        helper.make_node("Reshape", ["context", "merged"], ["y"], name="merge_heads"),
    ]
    initializers = [numpy_helper.from_array(w, n) for n, w in weights.items()] + [
        ints("i0", 0), ints("i1", 1), ints("axes0", [0]), ints("head_dims", [HEADS, HIDDEN // HEADS]),
        ints("start0", [0]), ints("end2", [-2]), ints("hidden", [HIDDEN]),
        numpy_helper.from_array(np.array(1 / np.sqrt(HIDDEN // HEADS), dtype=np.float32), "scale")]
    graph = helper.make_graph(nodes, "attention",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", HIDDEN])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", HIDDEN])],
                              initializers)
    return save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def flatten_then_linear(path: pathlib.Path) -> pathlib.Path:
    """torch's x.view(x.size(0), -1) @ w on x of (batch, 3, 4)."""
    nodes = [helper.make_node("Shape", ["x"], ["s"], name="shape")]
    nodes.append(helper.make_node("Concat", [size_of(nodes, "s", 0), "rest"], ["target"], name="target", axis=0))
    nodes += [helper.make_node("Reshape", ["x", "target"], ["flat"], name="flatten"),
              helper.make_node("MatMul", ["flat", "w"], ["y"], name="linear")]
    w = RNG.standard_normal((12, 5)).astype(np.float32)
    graph = helper.make_graph(nodes, "flatten",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 5])],
                              [ints("i0", 0), ints("axes0", [0]), ints("rest", [-1]), numpy_helper.from_array(w, "w")])
    return save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def save(model, path: pathlib.Path) -> pathlib.Path:
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, str(path))
    return path


def run_cli(cli, model, declared, x, folder: pathlib.Path):
    """`tensoracle run --onnx` with x's range declared; the engine cache is shared by the runs."""
    inputs, outputs = folder / f"x{x.shape}.npz", folder / f"y{x.shape}.npz"
    np.savez(inputs, x=x)
    env = dict(os.environ, TENSORACLE_CACHE_DIR=str(folder / "cache"))
    proc = subprocess.run([str(cli), "run", "--onnx", str(model), "--input", declared, "--inputs", str(inputs),
                           "--outputs", str(outputs), "--quiet"], capture_output=True, text=True, env=env)
    return proc, outputs


@pytest.mark.parametrize("make, declared, shapes", [
    (self_attention, "x:1x1x8:2x4x8:4x8x8", [(2, 3, 8), (3, 7, 8)]),
    (flatten_then_linear, "x:1x3x4:2x3x4:16x3x4", [(1, 3, 4), (9, 3, 4)]),
], ids=["self_attention", "flatten_then_linear"])
def test_a_dynamic_shape_chain_runs_at_two_sizes_like_onnxruntime(make, declared, shapes, cli, tmp_path):
    model = make(tmp_path / "model.onnx")
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    for shape in shapes:
        x = RNG.standard_normal(shape).astype(np.float32)
        proc, outputs = run_cli(cli, model, declared, x, tmp_path)
        assert proc.returncode == 0, proc.stderr
        [expected] = session.run(None, {"x": x})
        with np.load(outputs) as got:
            assert got["y"].shape == expected.shape
            np.testing.assert_allclose(got["y"], expected, rtol=1e-5, atol=1e-5)


def test_a_shape_that_needs_a_dynamic_dims_value_is_refused_naming_it(cli, tmp_path):
    graph = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["s"], name="shape"),
         helper.make_node("ConstantOfShape", ["s"], ["zeros"], name="zeros"),
         helper.make_node("Add", ["x", "zeros"], ["y"], name="add")],
        "generated", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])])
    model = save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "model.onnx")
    proc, outputs = run_cli(cli, model, "x:1x4:2x4:8x4", np.zeros((2, 4), np.float32), tmp_path)
    assert proc.returncode == 2 and not outputs.exists()
    assert ("ONNX node 'zeros' (op ConstantOfShape, domain ai.onnx, opset 17): input 0 's' depends on the dynamic dim "
            "'batch' of input 'x'") in proc.stderr
