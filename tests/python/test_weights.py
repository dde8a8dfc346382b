"""Weights (memory-mapped safetensors, zero-copy NumPy views) and the array files tensoracle reads
and writes, for every type."""

import gc

import ml_dtypes
import numpy as np
import pytest
from safetensors.numpy import load_file

import tensoracle

from conftest import FIXTURES

TINYNET_WEIGHTS = FIXTURES / "examples" / "tinynet" / "weights.safetensors"

ALL_TYPES = [np.float32, np.float16, ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, np.float64,
             np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64, np.bool_]


def sample_arrays():
    rng = np.random.default_rng(4)
    out = {}
    for dtype in ALL_TYPES:
        name = np.dtype(dtype).name
        out[name] = (rng.normal(size=(3, 5)) * 10).astype(dtype)
    out["scalar"] = np.array(2.5, np.float32)
    out["empty"] = np.zeros((0, 4), np.float16)
    return out


def test_views_are_the_files_bytes_without_a_copy():
    weights = tensoracle.Weights(TINYNET_WEIGHTS)
    reference = load_file(str(TINYNET_WEIGHTS))
    assert weights.names() == sorted(reference) and len(weights) == len(reference)
    for name in weights:
        view = weights[name]
        assert view.dtype == reference[name].dtype and view.shape == reference[name].shape
        assert np.array_equal(view, reference[name])
        assert not view.flags.writeable
        info = weights.info(name)
        assert (info.name, info.dtype, info.shape) == (name, "fp32", view.shape)
    assert "conv1.weight" in weights and "nope" not in weights
    assert weights.files == [str(TINYNET_WEIGHTS)]


def test_a_view_keeps_the_mapping_alive():
    weights = tensoracle.Weights.open(TINYNET_WEIGHTS)
    view = weights["fc.weight"]
    expected = np.array(view)
    del weights
    gc.collect()
    assert np.array_equal(view, expected)


def test_unknown_names_and_bad_files_raise(tmp_path):
    weights = tensoracle.Weights(TINYNET_WEIGHTS)
    with pytest.raises(tensoracle.NotFoundError, match="conv1.wieght"):
        weights["conv1.wieght"]
    (tmp_path / "bad.safetensors").write_bytes(b"\xff" * 16)
    with pytest.raises(tensoracle.CorruptDataError, match="bad.safetensors"):
        tensoracle.Weights(tmp_path / "bad.safetensors")


@pytest.mark.parametrize("suffix", [".npz", ".safetensors"])
def test_every_type_round_trips_through_files(tmp_path, suffix):
    arrays = sample_arrays()
    path = tmp_path / f"arrays{suffix}"
    if suffix == ".npz":
        tensoracle.write_npz(path, arrays, compress=True)
    else:
        tensoracle.write_safetensors(path, arrays, metadata={"origin": "test"})
        assert tensoracle.Weights(path).metadata == {"origin": "test"}
    read = tensoracle.read_arrays(path)
    assert sorted(read) == sorted(arrays)
    for name, array in arrays.items():
        assert read[name].dtype == array.dtype, name
        assert read[name].shape == array.shape, name
        assert read[name].tobytes() == array.tobytes(), name


def test_npz_written_here_is_read_by_numpy(tmp_path):
    arrays = {"a": np.arange(6, dtype=np.int32).reshape(2, 3), "b": np.linspace(0, 1, 5)}
    tensoracle.write_npz(tmp_path / "x.npz", arrays)
    with np.load(tmp_path / "x.npz") as loaded:
        for name, array in arrays.items():
            assert np.array_equal(loaded[name], array)
    tensoracle.write_npy(tmp_path / "one.npy", arrays["a"].T)  # written in C order by value
    assert np.array_equal(np.load(tmp_path / "one.npy"), arrays["a"].T)
    assert list(tensoracle.read_arrays(tmp_path / "one.npy")) == ["one"]
