"""convert_pth and read_pth on every case of the committed .pth fixtures (tests/fixtures/pth,
made by scripts/gen-pth-fixtures.py with torch): the tensors torch saved, or the refusal."""

import json

import numpy as np
import pytest

import tensoracle

from conftest import FIXTURES

PTH = FIXTURES / "pth"
CASES = json.loads((PTH / "manifest.json").read_text())["cases"]


def case_id(case):
    return "-".join([case["file"].removesuffix(".pth")] + [f"{k}={case[k]}" for k in ("key", "dtype") if k in case])


def assert_same_tensors(actual: dict, expected: dict, converted: bool):
    """Bit-equal; after a dtype conversion NaN payloads may differ (torch's vectorized kernels make
    hardware NaNs, its scalar tails canonical ones), as in tests/host/pth/pth_fixtures_test.cpp."""
    assert sorted(actual) == sorted(expected)
    for name in expected:
        have, want = actual[name], expected[name]
        assert have.dtype == want.dtype, name
        assert have.shape == want.shape, name
        if converted and want.dtype.kind not in "biu":
            nan = np.isnan(want.astype(np.float64))
            assert np.array_equal(np.isnan(have.astype(np.float64)), nan), name
            assert have[~nan].tobytes() == want[~nan].tobytes(), name
        else:
            assert have.tobytes() == want.tobytes(), name


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_conversion_matches_torch_or_refuses(case, tmp_path):
    out = tmp_path / "out.safetensors"
    options = {k: case[k] for k in ("key", "dtype") if k in case}
    if "error" in case:
        with pytest.raises(tensoracle.Error, match=case["error"].replace(".", r"\.")):
            tensoracle.convert_pth(PTH / case["file"], out, **options)
        assert not out.exists()
        return
    conversion = tensoracle.convert_pth(PTH / case["file"], out, **options)
    expected = tensoracle.read_arrays(PTH / case["expected"])
    assert conversion.tensor_count == len(expected)
    assert len(conversion.source_sha256) == 64
    for note in case.get("notes", []):
        assert any(note in line for line in conversion.notes), (note, conversion.notes)
    converted = "dtype" in case
    assert_same_tensors(tensoracle.read_arrays(out), expected, converted)
    assert_same_tensors(tensoracle.read_pth(PTH / case["file"], **options), expected, converted)


def test_read_pth_gives_read_only_views_in_file_order():
    tensors = tensoracle.read_pth(PTH / "dtypes.pth")
    assert all(not array.flags.writeable for array in tensors.values())
    assert len(tensors) > 1


def test_convert_refuses_a_bad_dtype(tmp_path):
    with pytest.raises(tensoracle.InvalidArgumentError, match="dtype"):
        tensoracle.convert_pth(PTH / "dtypes.pth", tmp_path / "x.safetensors", dtype="complex")


def test_the_output_limit_is_the_callers_to_set(tmp_path):
    out = tmp_path / "x.safetensors"
    with pytest.raises(tensoracle.InvalidArgumentError, match=r"over the limit given \(1 B\)"):
        tensoracle.convert_pth(PTH / "dtypes.pth", out, max_output_bytes=1)
    assert not out.exists()
    with pytest.raises(tensoracle.InvalidArgumentError, match="over the limit given"):
        tensoracle.read_pth(PTH / "dtypes.pth", max_output_bytes=1)
    assert tensoracle.convert_pth(PTH / "dtypes.pth", out, max_output_bytes=1 << 30).tensor_count > 1
