"""Engines on the cuda backend from Python with device buffers: PyTorch tensors through DLPack and
the CUDA array interface (and CuPy arrays where CuPy is installed), bound without copies and
enqueued on the caller's stream. Skipped without torch and a GPU; scripts/gpu-check runs them
against a wheel built with the CUDA backend."""

import numpy as np
import pytest

import tensoracle

from conftest import REPO

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

LIMITS = REPO / "examples" / "tinynet" / "limits.json"


@pytest.fixture
def engine(tinynet_package):
    build = tensoracle.ModelPackage.load(tinynet_package).engine_build("tinynet")
    build.backend = "cuda"
    build.quiet = True
    opened = tensoracle.open_engine(build)
    assert opened.engine.backend == build.backend
    return opened.engine


class CudaArrayInterfaceOnly:
    """A device array that offers only __cuda_array_interface__ (as Numba's do)."""

    def __init__(self, tensor):
        self.tensor = tensor
        self.__cuda_array_interface__ = tensor.__cuda_array_interface__


def run_with_torch(engine, image, wrap=lambda t: t, stream=None):
    execution = engine.create_execution()
    x = torch.from_numpy(image).cuda()
    execution.set_input_shape("image", tuple(x.shape))
    y = torch.full(execution.tensor_shape("probs"), float("nan"), device="cuda")
    execution.bind("image", wrap(x))
    execution.bind("probs", wrap(y))
    s = stream if stream is not None else torch.cuda.current_stream()
    execution.enqueue(s)
    torch.cuda.synchronize()
    return y


def test_torch_tensors_in_and_out_pass_stage_one(engine, tinynet_io):
    y = run_with_torch(engine, tinynet_io["image"])
    assert y.is_cuda and y.dtype == torch.float32  # written in place: the caller's tensor holds the outputs
    result = tensoracle.compare_outputs({"probs": y.cpu().numpy()}, {"probs": tinynet_io["probs"]}, limits=LIMITS)
    assert result.passed, result.reasons


def test_every_stream_spelling_gives_the_same_outputs(engine, tinynet_io):
    image = tinynet_io["image"]
    expected = run_with_torch(engine, image).cpu()
    side = torch.cuda.Stream()
    for stream in (side, side.cuda_stream, torch.cuda.current_stream()):
        with torch.cuda.stream(side):
            got = run_with_torch(engine, image, stream=stream).cpu()
        assert torch.equal(got, expected)


def test_the_cuda_array_interface_binds_like_dlpack(engine, tinynet_io):
    via_dlpack = run_with_torch(engine, tinynet_io["image"]).cpu()
    via_interface = run_with_torch(engine, tinynet_io["image"], wrap=CudaArrayInterfaceOnly).cpu()
    assert torch.equal(via_dlpack, via_interface)


def test_host_run_equals_device_run(engine, tinynet_io):
    host = engine.create_execution().run({"image": tinynet_io["image"]})["probs"]
    device = run_with_torch(engine, tinynet_io["image"]).cpu().numpy()
    assert np.array_equal(host, device)


def test_wrong_memory_and_types_are_refused(engine):
    execution = engine.create_execution()
    with pytest.raises(tensoracle.InvalidArgumentError, match="cuda backend and needs CUDA device memory; the buffer is in host memory"):
        execution.bind("image", np.zeros((2, 3, 16, 16), np.float32))
    with pytest.raises(tensoracle.InvalidArgumentError, match="the buffer is bf16, the engine's tensor is fp32"):
        execution.bind("image", torch.zeros((2, 3, 16, 16), dtype=torch.bfloat16, device="cuda"))
    with pytest.raises(tensoracle.InvalidArgumentError, match="not contiguous"):
        execution.bind("image", torch.zeros((2, 16, 16, 3), device="cuda").permute(0, 3, 1, 2))


def test_cupy_arrays_bind_too(engine, tinynet_io):
    cupy = pytest.importorskip("cupy")
    execution = engine.create_execution()
    x = cupy.asarray(tinynet_io["image"])
    execution.set_input_shape("image", x.shape)
    y = cupy.zeros(execution.tensor_shape("probs"), dtype=cupy.float32)
    execution.bind("image", x)
    execution.bind("probs", y)
    stream = cupy.cuda.Stream(non_blocking=True)
    execution.enqueue(stream)
    stream.synchronize()
    expected = run_with_torch(engine, tinynet_io["image"]).cpu().numpy()
    assert np.array_equal(cupy.asnumpy(y), expected)
