"""Engines from Python on the cpu backend: the tinynet model package built and opened through the
cache, executions on NumPy buffers, and every misuse refused with a message that names it."""

import sys
import threading
import time

import numpy as np
import pytest

import tensoracle

from conftest import REPO


@pytest.fixture
def tinynet_build(tinynet_package):
    build = tensoracle.ModelPackage.load(tinynet_package).engine_build("tinynet")
    build.quiet = True
    return build


def test_package_graphs_and_their_defaults(tinynet_package):
    package = tensoracle.ModelPackage.load(tinynet_package)
    assert package.name == "tinynet" and package.graphs[0].name == "tinynet"
    [image] = package.graph("tinynet").default_inputs
    assert image.name == "image" and image.profiles == [tensoracle.ShapeRange((1, 3, 16, 16), (2, 3, 16, 16), (8, 3, 32, 32))]
    with pytest.raises(tensoracle.NotFoundError, match="tinynet"):
        package.graph("resnet")
    with pytest.raises(tensoracle.Error, match="nope.so"):
        tensoracle.ModelPackage.load("nope.so")


def test_stage_one_against_the_pytorch_reference(tinynet_build, tinynet_io, cache_dir):
    opened = tensoracle.open_engine(tinynet_build)
    assert opened.built and not opened.cache_hit and "cache miss" in opened.explanation
    assert opened.engine_path.startswith(str(cache_dir))
    outputs = opened.create_execution().run({"image": tinynet_io["image"]})
    result = tensoracle.compare_outputs(outputs, {"probs": tinynet_io["probs"]}, limits=REPO / "examples" / "tinynet" / "limits.json")
    assert result.passed, result.reasons

    again = tensoracle.open_engine(tinynet_build)
    assert again.cache_hit and not again.built and again.key == opened.key
    assert np.array_equal(again.create_execution().run({"image": tinynet_io["image"]})["probs"], outputs["probs"])


def test_a_changed_build_misses_and_says_why(tinynet_build):
    tensoracle.open_engine(tinynet_build)
    tinynet_build.settings.optimization_level = 0
    opened = tensoracle.open_engine(tinynet_build)
    assert opened.built and "builder_settings.optimization_level" in opened.explanation


def test_precision_fp16_is_another_key_with_fp32_io(tinynet_build, tinynet_io):
    fp32 = tensoracle.open_engine(tinynet_build)
    assert fp32.build_log == []
    tinynet_build.settings.precision = "fp16"
    assert tinynet_build.settings.keep_fp32 is None
    opened = tensoracle.open_engine(tinynet_build)
    assert opened.built and opened.key != fp32.key and "builder_settings.precision" in opened.explanation
    assert opened.build_log[0].startswith("precision:") and "converted to fp16" in opened.build_log[0]
    outputs = opened.create_execution().run({"image": tinynet_io["image"]})
    assert outputs["probs"].dtype == np.float32
    reference = tinynet_io["probs"].astype(np.float64)
    error = np.linalg.norm(outputs["probs"] - reference) / np.linalg.norm(reference)
    assert 0 < error < 5e-3  # docs/precision.md
    tinynet_build.settings.keep_fp32 = ["softmax"]
    assert tensoracle.open_engine(tinynet_build).key != opened.key
    with pytest.raises(ValueError, match="fp8"):
        tinynet_build.settings.precision = "fp8"
    assert tensoracle.BuilderSettings(precision="bf16", keep_fp32=[]).to_manifest()["keep_fp32"] == ""
    assert "fp8_fast_accumulation" not in tensoracle.BuilderSettings().to_manifest()
    assert tensoracle.BuilderSettings(fp8_fast_accumulation=True).to_manifest()["fp8_fast_accumulation"] == "on"


def test_policies(tinynet_build):
    with pytest.raises(tensoracle.Error, match="require-cached"):
        tensoracle.open_engine(tinynet_build, "require-cached")
    first = tensoracle.open_engine(tinynet_build, "reuse")
    assert tensoracle.open_engine(tinynet_build, "rebuild").built
    assert tensoracle.open_engine(tinynet_build, "require-cached").key == first.key
    with pytest.raises(tensoracle.InvalidArgumentError, match="sometimes"):
        tensoracle.open_engine(tinynet_build, "sometimes")


def test_bound_host_buffers_give_the_outputs_of_run(tinynet_build, tinynet_io):
    engine = tensoracle.open_engine(tinynet_build).engine
    image = tinynet_io["image"]
    expected = engine.create_execution().run({"image": image})["probs"]
    execution = engine.create_execution()
    execution.set_input_shape("image", image.shape)
    assert execution.tensor_shape("probs") == expected.shape
    probs = np.full(expected.shape, np.nan, np.float32)
    execution.bind("image", np.ascontiguousarray(image))
    execution.bind("probs", probs)
    execution.enqueue()
    assert np.array_equal(probs, expected)
    # Streams are accepted in every documented form (a cpu engine ignores them).
    class ProtocolStream:
        def __cuda_stream__(self):
            return (0, 0)
    class TorchLikeStream:
        cuda_stream = 0
    for stream in (None, 0, ProtocolStream(), TorchLikeStream()):
        probs[:] = 0
        execution.enqueue(stream)
        assert np.array_equal(probs, expected)


def test_a_buffer_too_small_for_new_shapes_is_refused_at_enqueue(tinynet_build):
    execution = tensoracle.open_engine(tinynet_build).engine.create_execution()
    execution.set_input_shape("image", (1, 3, 16, 16))
    execution.bind("image", np.zeros((1, 3, 16, 16), np.float32))
    execution.bind("probs", np.zeros((1, 10), np.float32))
    execution.enqueue()
    execution.set_input_shape("image", (2, 3, 16, 16))
    with pytest.raises(tensoracle.InvalidArgumentError, match=r"'image' holds 3072 bytes, its current shape \[2,3,16,16\] needs 6144"):
        execution.enqueue()


def test_misuse_is_named(tinynet_build):
    engine = tensoracle.open_engine(tinynet_build).engine
    execution = engine.create_execution()
    with pytest.raises(tensoracle.InvalidArgumentError, match="no buffer bound for 'image', 'probs'"):
        execution.enqueue()
    with pytest.raises(tensoracle.NotFoundError, match="'imgae'"):
        execution.bind("imgae", np.zeros(1, np.float32))
    with pytest.raises(tensoracle.InvalidArgumentError, match="input 'image': the buffer is fp64, the engine's tensor is fp32"):
        execution.bind("image", np.zeros((2, 3, 16, 16)))
    with pytest.raises(tensoracle.InvalidArgumentError, match="not contiguous"):
        execution.bind("image", np.zeros((2, 3, 16, 32), np.float32)[..., ::2])
    readonly = np.zeros((2, 10), np.float32)
    readonly.flags.writeable = False
    with pytest.raises(tensoracle.InvalidArgumentError, match="output 'probs': the buffer is read-only"):
        execution.bind("probs", readonly)

    class DeviceArray:  # what CuPy or Numba would hand over
        __cuda_array_interface__ = {"shape": (2, 10), "typestr": "<f4", "data": (0x10000, False), "version": 3, "strides": None}
    with pytest.raises(tensoracle.InvalidArgumentError, match="cpu backend and needs host memory; the buffer is in CUDA device memory"):
        execution.bind("probs", DeviceArray())
    with pytest.raises(tensoracle.InvalidArgumentError, match="is not a buffer"):
        execution.bind("probs", [1.0, 2.0])
    with pytest.raises(tensoracle.InvalidArgumentError, match="stream: expected None, an int handle"):
        execution.enqueue(stream="default")
    with pytest.raises(tensoracle.InvalidArgumentError, match=r"dim 3 is 64, outside the range \[16, 32\]"):
        execution.set_input_shape("image", (2, 3, 16, 64))
    with pytest.raises(tensoracle.InvalidArgumentError, match="'imgae' is not an input of the engine"):
        execution.run({"imgae": np.zeros((1, 3, 16, 16), np.float32)})
    with pytest.raises(tensoracle.InvalidArgumentError, match="input 'image' is fp64, the engine takes fp32"):
        execution.run({"image": np.zeros((1, 3, 16, 16))})


def test_serialized_engines_without_the_cache(tinynet_build, tinynet_io, tmp_path):
    data = tensoracle.build_serialized_engine(tinynet_build, plugins=[])
    engine = tensoracle.Engine.deserialize(data, "tinynet bytes")
    assert engine.backend == tinynet_build.backend and engine.input_names == ["image"] and engine.output_names == ["probs"]
    [image, probs] = engine.io_table
    assert (image.is_input, image.dtype, image.format) == (True, "fp32", "LINEAR")
    assert probs.profiles[0].max == (8, 10)
    (tmp_path / "tinynet.engine").write_bytes(data)
    from_file = tensoracle.Engine.open(tmp_path / "tinynet.engine")
    a = engine.create_execution().run({"image": tinynet_io["image"]})["probs"]
    b = from_file.create_execution().run({"image": tinynet_io["image"]})["probs"]
    assert np.array_equal(a, b)
    with pytest.raises(tensoracle.CorruptDataError, match="damaged bytes"):
        tensoracle.Engine.deserialize(data[:-1] + bytes([data[-1] ^ 1]), "damaged bytes")


def test_plugin_libraries_are_loaded_and_a_missing_one_is_named(tinynet_build, tmp_path):
    missing = tmp_path / "libdcn.so"
    not_a_library = tmp_path / "notes.so"
    not_a_library.write_text("not a shared object")
    for path in (missing, not_a_library):
        for call in (lambda: tensoracle.build_serialized_engine(tinynet_build, plugins=[path]),
                     lambda: tensoracle.open_engine(tinynet_build, plugins=[str(path)])):
            with pytest.raises(tensoracle.Error, match=path.name):
                call()
    assert tensoracle.open_engine(tinynet_build, plugins=None).built


def test_declared_inputs_are_checked_against_the_network(tinynet_build):
    tinynet_build.inputs = {"picture": (1, 3, 16, 16)}
    with pytest.raises(tensoracle.InvalidArgumentError, match="picture"):
        tensoracle.build_serialized_engine(tinynet_build)
    tinynet_build.inputs = {"image": [tensoracle.ShapeRange((1, 3, 16, 16), (1, 3, 16, 16), (4, 3, 16, 16)),
                                      tensoracle.ShapeRange.fixed((16, 3, 32, 32))]}
    engine = tensoracle.Engine.deserialize(tensoracle.build_serialized_engine(tinynet_build))
    assert engine.num_profiles == 2
    assert engine.create_execution(1).tensor_shape("probs") == (16, 10)
    tinynet_build.add_input("mask", (1,), dtype="fp16")
    assert tinynet_build.inputs[-1].dtype == "fp16"


def test_progress_messages_reach_python(tinynet_build, monkeypatch):
    messages = []
    tinynet_build.progress = messages.append
    tinynet_build.quiet = False
    tensoracle.build_serialized_engine(tinynet_build)
    assert any("layer" in m for m in messages), messages

    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)

    def broken(message):
        raise RuntimeError("progress display broke")
    tinynet_build.progress = broken
    assert tensoracle.build_serialized_engine(tinynet_build)  # the build still completes
    assert unraisable and "progress display broke" in str(unraisable[0].exc_value)
    unraisable.clear()  # its traceback holds this frame: no cycle left for the interpreter's exit


def test_the_gil_is_released_while_an_engine_runs(tinynet_build):
    """A Python thread makes progress while run() computes a large batch on the cpu backend."""
    execution = tensoracle.open_engine(tinynet_build).engine.create_execution()
    image = np.random.default_rng(0).normal(size=(8, 3, 32, 32)).astype(np.float32)
    ticks, stop = [], threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.0005)
    thread = threading.Thread(target=tick)
    thread.start()
    try:
        time.sleep(0.01)
        during = []
        for _ in range(5):
            start = time.perf_counter()
            execution.run({"image": image})
            end = time.perf_counter()
            during.append(sum(start < t < end for t in ticks))
    finally:
        stop.set()
        thread.join()
    assert max(during) > 0, during


def test_an_execution_refuses_a_second_thread_while_it_runs(tinynet_build):
    """run() releases the GIL; a call from another thread meanwhile is refused, not raced."""
    execution = tensoracle.open_engine(tinynet_build).engine.create_execution()
    image = np.random.default_rng(1).normal(size=(8, 3, 32, 32)).astype(np.float32)
    expected = execution.run({"image": image})["probs"]
    refused, results, stop = [], [], threading.Event()

    def runner():
        while not stop.is_set():
            try:
                results.append(execution.run({"image": image})["probs"])
            except tensoracle.FailedPreconditionError:
                pass  # the main thread held it for a moment
    thread = threading.Thread(target=runner)
    thread.start()
    try:
        deadline = time.perf_counter() + 2.0
        while not refused and time.perf_counter() < deadline:
            try:
                execution.set_input_shape("image", (8, 3, 32, 32))
            except tensoracle.FailedPreconditionError as error:
                refused.append(str(error))
    finally:
        stop.set()
        thread.join()
    assert refused and "in use by another thread" in refused[0]
    assert results and all(np.array_equal(r, expected) for r in results)
