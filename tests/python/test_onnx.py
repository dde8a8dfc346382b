"""ONNX models from Python (docs/onnx.md): imported into a Network to inspect, built through the
cache on the cpu backend and run against NumPy, checked node by node, and refused with the C++
message when an op or the file is wrong. The models are made here with the onnx package."""

import hashlib
import json
import pathlib
import subprocess

import numpy as np
import pytest

import tensoracle

onnx = pytest.importorskip("onnx", reason="the tests write their models with the onnx package (scripts/setup installs it)")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

RNG = np.random.default_rng(18)


def save(model, path: pathlib.Path) -> pathlib.Path:
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def opset(version: int = 17):
    return [helper.make_opsetid("", version)]


@pytest.fixture
def mlp(tmp_path):
    """y = relu(x @ w1 + b1) @ w2 + b2, x of shape (batch, 8) with a symbolic batch dim."""
    w1, b1 = RNG.standard_normal((8, 16)).astype(np.float32), RNG.standard_normal(16).astype(np.float32)
    w2, b2 = RNG.standard_normal((16, 4)).astype(np.float32), RNG.standard_normal(4).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["h0"], name="fc1"),
         helper.make_node("Add", ["h0", "b1"], ["h1"], name="bias1"),
         helper.make_node("Relu", ["h1"], ["h2"], name="relu"),
         helper.make_node("MatMul", ["h2", "w2"], ["h3"], name="fc2"),
         helper.make_node("Add", ["h3", "b2"], ["y"], name="bias2")],
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])],
        [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"))])
    path = save(helper.make_model(graph, opset_imports=opset(), producer_name="test_onnx"), tmp_path / "mlp.onnx")
    reference = lambda x: np.maximum(x @ w1 + b1, 0) @ w2 + b2  # noqa: E731
    return path, reference


@pytest.fixture
def conv(tmp_path):
    """y = relu(conv3x3(x, w, b, pad 1)) on a fixed 1x2x6x6 input."""
    w = RNG.integers(-2, 3, (3, 2, 3, 3)).astype(np.float32)
    b = RNG.integers(-2, 3, 3).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
         helper.make_node("Relu", ["c"], ["y"], name="relu")],
        "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 6, 6])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    path = save(helper.make_model(graph, opset_imports=opset()), tmp_path / "conv.onnx")

    def reference(x):
        padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
        out = np.zeros((1, 3, 6, 6), np.float32)
        for i in range(6):
            for j in range(6):
                out[0, :, i, j] = np.tensordot(w, padded[0, :, i:i + 3, j:j + 3], axes=3) + b
        return np.maximum(out, 0)

    return path, reference


def test_an_imported_model_is_a_network_to_inspect(mlp):
    path, _ = mlp
    model = tensoracle.network_from_onnx(path)
    assert model.path == str(path) and model.opset == 17 and "test_onnx" in model.producer
    [x] = model.inputs
    assert (x.name, x.dtype, x.shape, x.dim_names) == ("x", "fp32", (-1, 8), ["batch", ""])
    assert [t.name for t in model.network.inputs] == ["x"] and [t.name for t in model.network.outputs] == ["y"]
    assert model.network.outputs[0].shape == (-1, 4)
    assert "matmul" in model.network.to_text().lower()
    assert model.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_an_mlp_with_a_dynamic_batch_runs_like_numpy(mlp):
    path, reference = mlp
    model = tensoracle.network_from_onnx(path)
    build = tensoracle.onnx_engine_build(model, inputs={"x": tensoracle.ShapeRange((1, 8), (4, 8), (16, 8))})
    assert build.name == "mlp" and build.graph is None
    opened = tensoracle.open_engine(build)
    manifest = json.loads(opened.engine.key_manifest)
    assert json.dumps(manifest).count(model.sha256) == 1, manifest
    execution = opened.create_execution()
    for batch in (1, 5, 16):
        x = RNG.standard_normal((batch, 8)).astype(np.float32)
        np.testing.assert_allclose(execution.run({"x": x})["y"], reference(x), rtol=1e-5, atol=1e-5)


def test_a_symbolic_dim_needs_its_inputs_declared(mlp):
    build = tensoracle.onnx_engine_build(tensoracle.network_from_onnx(mlp[0]), "mlp")
    assert build.inputs == []
    with pytest.raises(tensoracle.Error, match="'x'"):
        tensoracle.open_engine(build)


def test_a_conv_model_runs_like_numpy_and_matches_onnxruntime(conv):
    path, reference = conv
    opened = tensoracle.open_engine(tensoracle.onnx_engine_build(tensoracle.network_from_onnx(path)))
    x = RNG.integers(-3, 4, (1, 2, 6, 6)).astype(np.float32)
    y = opened.create_execution().run({"x": x})["y"]
    np.testing.assert_array_equal(y, reference(x))  # small integers: exact in fp32
    ort = pytest.importorskip("onnxruntime")
    [expected] = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_array_equal(y, expected)


def test_precision_fp16_gives_another_key_and_close_outputs(conv):
    model = tensoracle.network_from_onnx(conv[0])
    fp32 = tensoracle.open_engine(tensoracle.onnx_engine_build(model))
    fp16 = tensoracle.open_engine(tensoracle.onnx_engine_build(model, settings=tensoracle.BuilderSettings(precision="fp16")))
    assert fp16.built and fp16.key != fp32.key and "builder_settings.precision" in fp16.explanation
    x = RNG.integers(-3, 4, (1, 2, 6, 6)).astype(np.float32)
    np.testing.assert_allclose(fp16.create_execution().run({"x": x})["y"], conv[1](x), rtol=1e-2, atol=1e-2)


def test_the_key_follows_the_model_file_and_matches_the_cli(conv, cli, tmp_path):
    path, _ = conv
    opened = tensoracle.open_engine(tensoracle.onnx_engine_build(tensoracle.network_from_onnx(path)))
    # The CLI builds the same key from the same file (the cache is shared through TENSORACLE_CACHE_DIR).
    run = subprocess.run([str(cli), "build", "--onnx", str(path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert opened.key in run.stdout
    # Another file with the same graph (another producer name) is another model: another key.
    other = onnx.load(str(path))
    other.producer_name = "elsewhere"
    (tmp_path / "other").mkdir()
    copy = tensoracle.network_from_onnx(save(other, tmp_path / "other" / "conv.onnx"))
    assert tensoracle.open_engine(tensoracle.onnx_engine_build(copy)).key != opened.key


def unsupported_model(tmp_path) -> pathlib.Path:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"], name="ok"),
         helper.make_node("Hardmax", ["r"], ["h"], name="strange"),
         helper.make_node("Relu", ["h"], ["y"], name="after")],
        "unsupported",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    return save(helper.make_model(graph, opset_imports=opset()), tmp_path / "unsupported.onnx")


def test_an_unsupported_op_is_refused_naming_the_node_and_op_type(tmp_path):
    assert "Hardmax" not in tensoracle.onnx_supported_ops() and "Relu" in tensoracle.onnx_supported_ops()
    with pytest.raises(tensoracle.UnsupportedError) as caught:
        tensoracle.network_from_onnx(unsupported_model(tmp_path))
    assert "strange" in str(caught.value) and "Hardmax" in str(caught.value)
    assert caught.value.code == "unsupported"


def test_check_lists_supported_and_refused_nodes_like_the_cli(tmp_path, cli):
    path = unsupported_model(tmp_path)
    report = tensoracle.check_onnx_model(path)
    assert report.opset == 17 and report.model_problems == [] and not report.importable
    assert [(n.name, n.op_type, n.supported) for n in report.nodes] == [
        ("ok", "Relu", True), ("strange", "Hardmax", False), ("after", "Relu", False)]
    assert "Hardmax" in report.nodes[1].reason and "strange" in report.nodes[2].reason
    run = subprocess.run([str(cli), "onnx", "check", str(path), "--json"], capture_output=True, text=True)
    assert run.returncode == 1, run.stderr
    assert json.loads(run.stdout)["nodes"] == [
        {"name": n.name, "op_type": n.op_type, "domain": n.domain, "supported": n.supported, "reason": n.reason}
        for n in report.nodes]


def test_check_of_a_supported_model(conv):
    report = tensoracle.check_onnx_model(conv[0])
    assert report.importable and all(n.supported and n.reason == "" for n in report.nodes)
    assert [n.op_type for n in report.nodes] == ["Conv", "Relu"]


def test_a_truncated_or_missing_file_is_refused(conv, tmp_path):
    truncated = tmp_path / "truncated.onnx"
    truncated.write_bytes(conv[0].read_bytes()[:conv[0].stat().st_size // 2])
    with pytest.raises(tensoracle.CorruptDataError, match="truncated.onnx"):
        tensoracle.network_from_onnx(truncated)
    with pytest.raises(tensoracle.CorruptDataError, match="truncated.onnx"):
        tensoracle.check_onnx_model(truncated)
    with pytest.raises(tensoracle.NotFoundError, match="absent.onnx"):
        tensoracle.network_from_onnx(tmp_path / "absent.onnx")
