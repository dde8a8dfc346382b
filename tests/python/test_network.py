"""Graphs defined in Python. tinynet written in Python (examples/python/tinynet.py) is the C++
package's graph: the same structural hash and bit-equal outputs on the cpu backend. The layer
methods come from the op table and the attribute structs' field lists; a definition error raises at
the call that made it; a graph function's exception becomes the build's error with its traceback."""

import sys

import ml_dtypes
import numpy as np
import pytest

import tensoracle
from tensoracle import _tensoracle

from conftest import FIXTURES, REPO

sys.path.insert(0, str(REPO / "examples" / "python"))
import tinynet  # noqa: E402

WEIGHTS = FIXTURES / "examples" / "tinynet" / "weights.safetensors"


def graph_hash(engine):
    import json
    return json.loads(engine.key_manifest)["graph_hash"]


def test_python_tinynet_is_the_cpp_graph_bit_for_bit(tinynet_package, tinynet_io):
    cpp = tensoracle.ModelPackage.load(tinynet_package).engine_build("tinynet")
    python = tensoracle.EngineBuild(name="tinynet", graph=tinynet.graph("fp32"), graph_version="1", weights=WEIGHTS,
                                    inputs={"image": cpp.inputs[0].profiles})
    for build in (cpp, python):
        build.quiet = True
    cpp_engine = tensoracle.Engine.deserialize(tensoracle.build_serialized_engine(cpp))
    python_engine = tensoracle.Engine.deserialize(tensoracle.build_serialized_engine(python))
    assert graph_hash(python_engine) == graph_hash(cpp_engine)
    assert python_engine.key_manifest == cpp_engine.key_manifest  # the same cache key, so one cache entry
    rng = np.random.default_rng(8)
    for image in (tinynet_io["image"], rng.normal(size=(5, 3, 24, 32)).astype(np.float32)):
        a = cpp_engine.create_execution().run({"image": image})["probs"]
        b = python_engine.create_execution().run({"image": image})["probs"]
        assert a.tobytes() == b.tobytes()


def test_lower_precision_variants_build_and_keep_fp32_io():
    for dtype in ("fp16", "bf16"):
        net = tensoracle.Network()
        tinynet.graph(dtype)(net, tensoracle.Weights(WEIGHTS))
        [probs] = net.outputs
        assert (probs.name, probs.dtype, probs.shape) == ("probs", "fp32", (-1, 10))
        assert f"{dtype}[" in net.to_text()


def test_every_op_kind_is_a_layer_method_with_a_typed_signature():
    stub = (next(p for p in sys.modules["tensoracle"].__path__) + "/_tensoracle.pyi")
    text = open(stub).read()
    for kind in ("convolution", "deconvolution", "matmul", "elementwise", "unary", "activation", "softmax", "reduce",
                 "layer_norm", "rms_norm", "group_norm", "instance_norm", "batch_norm", "pooling", "resize", "reshape",
                 "transpose", "concat", "slice", "pad", "gather", "iota", "grid_sample", "select", "top_k", "attention",
                 "quantize", "dequantize", "cast"):
        assert callable(getattr(tensoracle.Network, kind)), kind
        assert f"    def {kind}(self, *inputs: Tensor | None" in text, kind
    # The plugin layer mirrors C++ Network::plugin(inputs, identity, parameters, name) instead.
    assert ("    def plugin(self, inputs: Sequence[Tensor], plugin: str, version: str, "
            "parameters: bytes = b'', *, name: str = '') -> tuple[Tensor, ...]") in text
    # Defaults and enumerations come from the structs' field lists.
    assert "epsilon: float = 1e-05" in text
    assert "op: Literal['add', 'sub', 'mul', 'div', 'pow', 'max', 'min'" in text


def test_layers_infer_types_and_shapes_as_they_are_defined():
    net = tensoracle.Network()
    x = net.add_input("x", "fp32", (2, -1, 8))
    scale = net.add_constant(np.ones(8, np.float32), "scale")
    y = net.layer_norm(x, scale, None, axis=-1, epsilon=1e-6, name="ln")
    assert (y.name, y.dtype, y.shape) == ("ln", "fp32", (2, -1, 8))
    values, indices = net.top_k(y, k=3, axis=-1)
    assert (values.shape, indices.dtype) == ((2, -1, 3), "int64")
    h = net.cast(net.transpose(y, perm=[0, 2, 1]), output_type=ml_dtypes.bfloat16)
    assert (h.dtype, h.shape) == ("bf16", (2, 8, -1))
    z = net.concat(x, x, axis=2)
    assert z.shape == (2, -1, 16)
    pooled = net.pooling(net.reshape(x, shape=[2, 1, -1, 8]), kind="average", global_=True)
    assert pooled.shape == (2, 1, 1, 1)
    net.mark_output(values, "top")
    assert [t.name for t in net.outputs] == ["top"] and net.num_layers > 5
    assert len(net.structural_hash()) == 64 and "layer_norm" in net.canonical_form()


def test_the_structural_hash_ignores_names_but_not_attributes():
    def define(name, epsilon):
        net = tensoracle.Network()
        x = net.add_input("x", "fp32", (4, 8))
        net.mark_output(net.rms_norm(x, net.add_constant(np.ones(8, np.float32)), epsilon=epsilon, name=name), "y")
        return net.structural_hash()
    assert define("a", 1e-6) == define("b", 1e-6)
    assert define("a", 1e-6) != define("a", 1e-5)


def test_definition_errors_raise_at_the_faulty_call():
    net = tensoracle.Network()
    a = net.add_input("a", "fp32", (2, 3))
    b = net.add_input("b", "fp16", (2, 3))
    with pytest.raises(tensoracle.InvalidArgumentError, match=r"fp16") as caught:
        net.add(a, b, name="mix")
    assert "mix" in str(caught.value)
    with pytest.raises(tensoracle.InvalidArgumentError, match="no attribute 'strides' \\(attributes: stride, dilation"):
        tensoracle.Network().convolution(None, stride=[1], strides=[1])
    fresh = tensoracle.Network()
    x = fresh.add_input("x", "fp32", (1, 4))
    with pytest.raises(tensoracle.InvalidArgumentError, match=r"activation\(kind=...\): 'gelu' is not one of 'relu'"):
        fresh.activation(x, kind="gelu")
    with pytest.raises(tensoracle.InvalidArgumentError, match=r"softmax\(axis=...\): expected an int, got 1.5"):
        fresh.softmax(x, axis=1.5)
    with pytest.raises(tensoracle.InvalidArgumentError, match="belongs to another Network"):
        tensoracle.Network().relu(x)
    with pytest.raises(tensoracle.InvalidArgumentError, match="expected a Tensor of this network, got 3"):
        fresh.add(x, 3)


def test_a_graph_functions_exception_is_the_builds_error_with_its_traceback():
    def broken_graph(net, weights):
        x = net.add_input("x", "fp32", (1, 4))
        net.mark_output(net.relu(x), "y")
        raise KeyError("no such layer in my model")

    build = tensoracle.EngineBuild(name="broken", graph=broken_graph, graph_version="1", weights=WEIGHTS, quiet=True)
    with pytest.raises(tensoracle.InvalidArgumentError) as caught:
        tensoracle.build_serialized_engine(build)
    message = str(caught.value)
    assert "graph function <function" in message and "broken_graph" in message
    assert "Traceback (most recent call last)" in message and "KeyError: 'no such layer in my model'" in message

    def missing_weight(net, weights):
        net.add_input("x", "fp32", (1, 4))
        weights["no.such.tensor"]
    build.graph = missing_weight
    with pytest.raises(tensoracle.NotFoundError, match="no.such.tensor"):  # a tensoracle.Error keeps its class
        tensoracle.build_serialized_engine(build)

    build.graph = lambda net, weights: net.add_input("x", "fp32", (1, 4))
    with pytest.raises(tensoracle.InvalidArgumentError, match="returned <Tensor 'x'.*should mark the network's outputs"):
        tensoracle.build_serialized_engine(build)


def test_a_network_lent_to_a_graph_function_cannot_outlive_the_call():
    kept = []

    def graph(net, weights):
        x = net.add_input("x", "fp32", (1, 4))
        net.mark_output(net.relu(x), "y")
        kept.append(net)

    build = tensoracle.EngineBuild(name="lent", graph=graph, graph_version="1", weights=WEIGHTS, inputs={"x": (1, 4)},
                                   quiet=True)
    engine = tensoracle.Engine.deserialize(tensoracle.build_serialized_engine(build))
    assert np.array_equal(engine.create_execution().run({"x": np.array([[-1, 2, -3, 4]], np.float32)})["y"],
                          [[0, 2, 0, 4]])
    with pytest.raises(tensoracle.FailedPreconditionError, match="lent to a graph function that has returned"):
        kept[0].add_input("late", "fp32", (1,))


def test_the_shorthands_are_the_generic_layers():
    net = tensoracle.Network()
    a = net.add_input("a", "fp32", (3,))
    b = net.add_input("b", "fp32", (3,))
    net.mark_output(net.sub(net.mul(a, b), net.div(net.relu(a), net.gelu(b))), "y")
    text = net.to_text()
    for op in ("mul", "sub", "div", "relu", "gelu_erf"):
        assert op in text, op
