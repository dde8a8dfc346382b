"""ONNX patterns whose sizes are dynamic dims (docs/onnx.md, "Shape computations on dynamic dims"):
torch's -1 handling in an expand (Equal/Where on a shape), torch.arange of a dim (Range),
position_ids[:, :seq] (a Slice to a dynamic end), mask[batch_idx, seq_idx] (GatherND) and the
token-type buffer read by position (GatherElements), as HF BERT's exports write them. Each model is
built with the onnx helper API, run by the CLI at two sizes inside one declared range and compared
with onnxruntime; a Gather by int64 indices between converted layers gets no cast in an fp16 build."""

import os
import pathlib
import re
import subprocess

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the tests write their models with the onnx package (scripts/setup installs it)")
ort = pytest.importorskip("onnxruntime", reason="onnxruntime is the reference (scripts/setup installs it)")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

RNG = np.random.default_rng(1805)
MAX_POSITIONS = 16


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def save(model, path: pathlib.Path) -> pathlib.Path:
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, str(path))
    return path


def embeddings(path: pathlib.Path) -> pathlib.Path:
    """ids (batch, seq) -> word + token-type + position embeddings, HF BERT's way: positions are
    position_ids[:, :seq] of a [1, 16] buffer, token types are gathered from a zeros buffer by
    position (GatherElements) and expanded to (batch, seq) with torch's -1 handling
    (expand(shape) where Equal(shape, -1) -> Where)."""
    words = RNG.standard_normal((30, 4)).astype(np.float32)
    types = RNG.standard_normal((2, 4)).astype(np.float32)
    positions = RNG.standard_normal((MAX_POSITIONS, 4)).astype(np.float32)
    nodes = [
        helper.make_node("Shape", ["ids"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "i0"], ["batch"], name="batch"),
        helper.make_node("Gather", ["s", "i1"], ["seq"], name="seq"),
        helper.make_node("Unsqueeze", ["seq", "axes0"], ["seq1"], name="seq1"),
        helper.make_node("Unsqueeze", ["batch", "axes0"], ["batch1"], name="batch1"),
        helper.make_node("Slice", ["position_ids", "start0", "seq1", "axes1"], ["pos"], name="positions"),
        helper.make_node("GatherElements", ["type_buffer", "pos"], ["type_row"], name="type_row", axis=1),
        helper.make_node("Concat", ["batch1", "minus_one"], ["wanted"], name="wanted", axis=0),
        helper.make_node("Equal", ["wanted", "minus_ones"], ["keep"], name="keep"),
        helper.make_node("Shape", ["type_row"], ["type_shape"], name="type_shape"),
        helper.make_node("Where", ["keep", "type_shape", "wanted"], ["target"], name="target"),
        helper.make_node("Expand", ["type_row", "target"], ["type_ids"], name="type_ids"),
        helper.make_node("Gather", ["words", "ids"], ["w"], name="word_embeddings"),
        helper.make_node("Gather", ["types", "type_ids"], ["t"], name="type_embeddings"),
        helper.make_node("Gather", ["positions", "pos"], ["p"], name="position_embeddings"),
        helper.make_node("Add", ["w", "t"], ["wt"], name="add_types"),
        helper.make_node("Add", ["wt", "p"], ["y"], name="add_positions"),
    ]
    initializers = [
        numpy_helper.from_array(words, "words"), numpy_helper.from_array(types, "types"),
        numpy_helper.from_array(positions, "positions"), ints("i0", 0), ints("i1", 1), ints("axes0", [0]),
        ints("axes1", [1]), ints("start0", [0]), ints("minus_one", [-1]), ints("minus_ones", [-1, -1]),
        ints("position_ids", [list(range(MAX_POSITIONS))]), ints("type_buffer", [[0] * MAX_POSITIONS])]
    graph = helper.make_graph(nodes, "embeddings",
                              [helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "seq"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", 4])],
                              initializers)
    return save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)


def pair_mask(path: pathlib.Path) -> pathlib.Path:
    """mask (batch, seq) read at every (b, s) by GatherND of index pairs built from
    torch.arange(batch) and torch.arange(seq) (Range of dynamic dims), as the dynamo exporter
    writes BERT's padding mask."""
    nodes = [
        helper.make_node("Shape", ["mask"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "i0"], ["nb"], name="nb"),
        helper.make_node("Gather", ["s", "i1"], ["ns"], name="ns"),
        helper.make_node("Range", ["zero", "nb", "one"], ["b"], name="arange_batch"),
        helper.make_node("Range", ["zero", "ns", "one"], ["q"], name="arange_seq"),
        helper.make_node("Unsqueeze", ["b", "b_axes"], ["b3"], name="b3"),
        helper.make_node("Unsqueeze", ["q", "s_axes"], ["q3"], name="q3"),
        helper.make_node("Mul", ["q3", "zero"], ["qz"], name="qz"),
        helper.make_node("Mul", ["b3", "zero"], ["bz"], name="bz"),
        helper.make_node("Add", ["b3", "qz"], ["b_full"], name="b_full"),
        helper.make_node("Add", ["q3", "bz"], ["q_full"], name="q_full"),
        helper.make_node("Concat", ["b_full", "q_full"], ["pairs"], name="pairs", axis=-1),
        helper.make_node("GatherND", ["mask", "pairs"], ["y"], name="gather"),
    ]
    graph = helper.make_graph(nodes, "pair_mask",
                              [helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["batch", "seq"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq"])],
                              [ints("i0", 0), ints("i1", 1), ints("zero", 0), ints("one", 1), ints("b_axes", [1, 2]),
                               ints("s_axes", [0, 2])])
    return save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)


def cli_env(folder: pathlib.Path):
    return dict(os.environ, TENSORACLE_CACHE_DIR=str(folder / "cache"))


@pytest.mark.parametrize("make, name, declared, feeds", [
    (embeddings, "ids", "ids:1x1:2x8:4x16", [lambda: RNG.integers(0, 30, (2, 5)), lambda: RNG.integers(0, 30, (3, 11))]),
    (pair_mask, "mask", "mask:1x1:2x4:4x8", [lambda: RNG.standard_normal((2, 3)).astype(np.float32),
                                            lambda: RNG.standard_normal((4, 7)).astype(np.float32)]),
], ids=["embeddings", "pair_mask"])
def test_a_dynamic_size_pattern_runs_at_two_sizes_like_onnxruntime(make, name, declared, feeds, cli, tmp_path):
    model = make(tmp_path / "model.onnx")
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    for feed in feeds:
        x = feed()
        inputs, outputs = tmp_path / f"x{x.shape}.npz", tmp_path / f"y{x.shape}.npz"
        np.savez(inputs, **{name: x})
        proc = subprocess.run([str(cli), "run", "--onnx", str(model), "--input", declared, "--inputs", str(inputs),
                               "--outputs", str(outputs), "--quiet"], capture_output=True, text=True,
                              env=cli_env(tmp_path))
        assert proc.returncode == 0, proc.stderr
        [expected] = session.run(None, {name: x})
        with np.load(outputs) as got:
            assert got["y"].shape == expected.shape
            np.testing.assert_allclose(got["y"], expected, rtol=1e-6, atol=1e-6)


def test_a_gather_by_int64_indices_between_converted_layers_gets_no_cast_in_fp16(cli, tmp_path):
    """x @ w1 -> Gather(rows [2, 0], axis 1) -> @ w2: only the input and the output are cast."""
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["h"], name="in"),
         helper.make_node("Gather", ["h", "rows"], ["picked"], name="pick", axis=1),
         helper.make_node("MatMul", ["picked", "w2"], ["y"], name="out")],
        "pick", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2, 4])],
        [numpy_helper.from_array(RNG.standard_normal((8, 8)).astype(np.float32), "w1"), ints("rows", [2, 0]),
         numpy_helper.from_array(RNG.standard_normal((8, 4)).astype(np.float32), "w2")])
    model = save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "pick.onnx")
    proc = subprocess.run([str(cli), "build", "--onnx", str(model), "--precision", "fp16"], capture_output=True,
                          text=True, env=cli_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    log = proc.stdout + proc.stderr
    assert re.search(r"precision: 3 layer\(s\) converted to fp16, \d+ constant\(s\) converted, 2 cast\(s\) inserted", log), log
    assert "kept" not in log, log
