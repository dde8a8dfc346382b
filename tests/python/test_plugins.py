"""Plugins from Python (docs/python.md "Plugins"): a graph function adds the test plugin library's
test::scale_add (y = x * scale + b, tests/host/plugin/test_plugins) with Network.plugin, the cpu
backend runs its CPU implementation and matches NumPy exactly, and an engine file that needs the
plugin opens with the library and is refused, naming the plugin and the library, without it."""

import struct

import numpy as np
import pytest

import tensoracle

from conftest import FIXTURES

SCALE = 2.5
# The graph reads no weight, but a build needs a weights file (Python has no Weights.none()).
WEIGHTS = FIXTURES / "examples" / "tinynet" / "weights.safetensors"


def scale_add_graph(net, weights):
    """y = relu(scale_add(x + 1, b; scale 2.5)): the plugin between two standard layers."""
    x = net.add_input("x", "fp32", (-1, 4))
    b = net.add_input("b", "fp32", (-1, 4))
    shifted = net.add(x, net.add_constant(np.ones(1, np.float32), "one"))
    outputs = net.plugin([shifted, b], "test::scale_add", "1.0.0", struct.pack("<f", SCALE), name="scale_add")
    assert len(outputs) == 1 and (outputs[0].dtype, outputs[0].shape) == ("fp32", (-1, 4))
    net.mark_output(net.relu(outputs[0]), "y")


def scale_add_build():
    profile = tensoracle.ShapeRange((1, 4), (2, 4), (8, 4))
    return tensoracle.EngineBuild(name="scale_add_net", graph=scale_add_graph, graph_version="1",
                                  weights=WEIGHTS, inputs={"x": profile, "b": profile}, quiet=True)


def inputs(batch):
    # Multiples of 1/4 of small size: every sum and product is exact in fp32, so the plugin's
    # result must equal NumPy's bit for bit.
    i = np.arange(batch * 4, dtype=np.float32).reshape(batch, 4) % 7
    return {"x": i * 0.5 - 1.5, "b": i * -0.25 - 0.5}


def expected(x, b):
    return np.maximum((x + np.float32(1)) * np.float32(SCALE) + b, np.float32(0))


def check_runs(engine):
    for batch in (1, 3, 8):
        given = inputs(batch)
        y = engine.create_execution().run(given)["y"]
        want = expected(given["x"], given["b"])
        assert y.dtype == np.float32 and y.shape == (batch, 4)
        assert np.array_equal(y, want), (batch, y, want)
        assert (want > 0).any() and (want == 0).any()  # the relu neither hides the plugin nor does nothing


def test_a_graph_with_a_plugin_layer_runs_on_the_cpu_backend_and_matches_numpy(test_plugins_library):
    engine = tensoracle.Engine.deserialize(
        tensoracle.build_serialized_engine(scale_add_build(), plugins=[test_plugins_library]), "scale_add bytes",
        plugins=[test_plugins_library])
    assert engine.input_names == ["x", "b"] and engine.output_names == ["y"]
    check_runs(engine)

    opened = tensoracle.open_engine(scale_add_build(), plugins=[str(test_plugins_library)])
    assert opened.built
    check_runs(opened.engine)


def test_inputs_set_one_at_a_time_reach_the_plugin_together(test_plugins_library):
    # test::scale_add's configure refuses x and b of different shapes (issue 15): setting x, then
    # b, to a new batch must not ask it in between.
    engine = tensoracle.Engine.deserialize(tensoracle.build_serialized_engine(scale_add_build(),
                                                                              plugins=[test_plugins_library]),
                                           plugins=[test_plugins_library])
    execution = engine.create_execution()  # x and b at opt, (2, 4)
    given = inputs(3)
    y = np.zeros((3, 4), np.float32)
    execution.set_input_shape("x", (3, 4))
    assert execution.tensor_shape("y") == (3, 4)
    execution.set_input_shape("b", (3, 4))
    for name, array in (("x", given["x"]), ("b", given["b"]), ("y", y)):
        execution.bind(name, array)
    execution.enqueue()
    assert np.array_equal(y, expected(given["x"], given["b"]))


def test_a_plugin_layer_without_its_library_or_with_bad_parameters_names_the_plugin(test_plugins_library):
    with pytest.raises(tensoracle.Error, match=r"layer 'scale_add' \(plugin\): plugin 'test::scale_add' version 1.0.0 "
                                               r"is not loaded"):
        tensoracle.build_serialized_engine(scale_add_build())

    def bad_parameters(net, weights):
        x = net.add_input("x", "fp32", (-1, 4))
        net.plugin([x, x], "test::scale_add", "1.0.0", b"\x00\x00", name="short")

    build = scale_add_build()
    build.graph = bad_parameters
    with pytest.raises(tensoracle.Error, match="layer 'short'.*test::scale_add 1.0.0.*parameters must be one float"):
        tensoracle.build_serialized_engine(build, plugins=[test_plugins_library])


def test_a_network_made_in_python_resolves_plugins_through_its_own_libraries(test_plugins_library):
    net = tensoracle.Network(plugins=[test_plugins_library])
    x = net.add_input("x", "fp32", (-1, 4))
    (y,) = net.plugin([x, x], "test::scale_add", "1.0.0", struct.pack("<f", 1.0))
    assert (y.dtype, y.shape) == ("fp32", (-1, 4))
    assert "plugin" in net.to_text()

    bare = tensoracle.Network()
    z = bare.add_input("z", "fp32", (2, 4))
    with pytest.raises(tensoracle.NotFoundError, match="plugin 'test::scale_add' version 1.0.0 is not loaded"):
        bare.plugin([z, z], "test::scale_add", "1.0.0", struct.pack("<f", 1.0))
    with pytest.raises(tensoracle.Error, match="plugin: inputs: expected a sequence of Tensors"):
        net.plugin(x, "test::scale_add", "1.0.0")
    with pytest.raises(tensoracle.Error, match="nope.so"):
        tensoracle.Network(plugins=["nope.so"])


def test_an_engine_file_opens_with_its_plugin_library_and_without_it_names_both(test_plugins_library, tmp_path):
    path = tmp_path / "scale_add.engine"
    path.write_bytes(tensoracle.build_serialized_engine(scale_add_build(), plugins=[test_plugins_library]))

    check_runs(tensoracle.Engine.open(path, plugins=[test_plugins_library]))
    check_runs(tensoracle.Engine.open(str(path), [str(test_plugins_library)]))

    for opening in (lambda: tensoracle.Engine.open(path), lambda: tensoracle.Engine.open(path, plugins=[]),
                    lambda: tensoracle.Engine.deserialize(path.read_bytes(), "scale_add.engine")):
        with pytest.raises(tensoracle.Error) as caught:
            opening()
        message = str(caught.value)
        assert "needs plugin 'test::scale_add' version 1.0.0, which is not loaded" in message, message
        assert test_plugins_library.name in message, message
