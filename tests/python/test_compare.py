"""compare_outputs from Python: the metrics equal NumPy's on random arrays of every type, the
gate and its reasons, every accepted input form, and the field names of `tensoracle compare --json`."""

import importlib.util
import json
import math
import subprocess

import ml_dtypes
import numpy as np
import pytest

import tensoracle

from conftest import FIXTURES, REPO


def load_fixture_generator():
    """scripts/gen-compare-fixtures.py: NumPy's definition of every metric (expected_metrics)."""
    spec = importlib.util.spec_from_file_location("gen_compare_fixtures", REPO / "scripts" / "gen-compare-fixtures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


numpy_metrics = load_fixture_generator()

FLOAT_TYPES = [np.float32, np.float16, ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, np.float64]
INT_TYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]
ALL_TYPES = FLOAT_TYPES + INT_TYPES + [np.bool_]
TYPE_IDS = [np.dtype(t).name for t in ALL_TYPES]


def random_pair(dtype, rng, shape=(7, 33)):
    """A reference and a candidate near it, in `dtype`; floating pairs get a few NaN and inf."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        ref = rng.random(shape) < 0.5
        cand = ref ^ (rng.random(shape) < 0.1)
        return cand, ref
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        low, high = max(info.min, -1000), min(info.max, 1000)
        ref = rng.integers(low, high, size=shape).astype(dtype)
        cand = np.clip(ref.astype(np.int64) + rng.integers(-3, 4, size=shape), low, high).astype(dtype)
        return cand, ref
    ref64 = rng.normal(0, 4, size=shape)
    cand64 = ref64 + rng.normal(0, 0.05, size=shape)
    ref, cand = ref64.astype(dtype), cand64.astype(dtype)
    cand.flat[3] = np.nan
    ref.flat[10] = np.nan
    ref.flat[11] = np.nan
    cand.flat[11] = np.nan  # NaN on both sides: inside the tolerance
    if dtype != np.dtype(ml_dtypes.float8_e4m3fn):  # e4m3fn has no infinities
        cand.flat[20] = np.inf
        ref.flat[21] = -np.inf
        cand.flat[21] = -np.inf  # equal infinities: inside the tolerance
    return cand, ref


def json_value(value):
    """A JSON report's value as the attribute holds it ("inf"/"nan" strings are floats there)."""
    if value in ("inf", "-inf", "nan"):
        return float(value)
    if isinstance(value, list):
        return tuple(value)
    return value


def assert_same(actual, expected, name):
    expected = json_value(expected)
    if isinstance(actual, list):
        actual = tuple(actual)
    if isinstance(expected, float) and math.isnan(expected):
        assert math.isnan(actual), name
    elif isinstance(expected, float):
        assert actual == pytest.approx(expected, rel=1e-12, abs=1e-300), name
    else:
        assert actual == expected, name


def assert_metrics(out, expected):
    """Every metric of `expected` (numpy_metrics.expected_metrics) equals the comparison's."""
    for name, value in expected.items():
        if name == "shape":
            assert out.shape == tuple(value)
        elif name in ("psnr", "snr", "mse"):
            if name in out.metrics:
                assert_same(out.metrics[name], value, name)
        else:
            assert_same(getattr(out, name), value, name)


@pytest.mark.parametrize("dtype", ALL_TYPES, ids=TYPE_IDS)
def test_metrics_equal_numpys(dtype):
    rng = np.random.default_rng(17)
    cand, ref = random_pair(dtype, rng)
    atol, rtol = 0.02, 0.01
    result = tensoracle.compare_outputs(cand, ref, atol=atol, rtol=rtol)
    out = result["output"]
    assert out.dtype == out.reference_dtype
    assert_metrics(out, numpy_metrics.expected_metrics(cand, ref, atol, rtol))
    assert out.atol == atol and out.rtol == rtol
    # The default gate: all finite and nothing outside the tolerance.
    failures = [out.outside_tolerance_count > 0,
                out.candidate_nan + out.candidate_posinf + out.candidate_neginf > 0,
                out.reference_nan + out.reference_posinf + out.reference_neginf > 0]
    assert result.passed == (not any(failures))
    assert len(result.reasons) == sum(failures)


@pytest.mark.parametrize("pair", [("candidate.npz", "reference.npz"),
                                  ("narrow.candidate.safetensors", "narrow.reference.safetensors")])
def test_the_committed_fixture_cases_equal_numpys(pair):
    """tests/fixtures/compare: edge cases (extremes, empty, all non-finite, ...) with NumPy's values."""
    expected = json.loads((FIXTURES / "compare" / "expected.json").read_text())
    result = tensoracle.compare_outputs(FIXTURES / "compare" / pair[0], FIXTURES / "compare" / pair[1],
                                        atol=expected["atol"], rtol=expected["rtol"], metrics=["psnr", "snr", "mse"])
    assert result.outputs
    for name, out in result.outputs.items():
        assert_metrics(out, expected["cases"][name])


def test_types_may_differ_between_the_sides():
    rng = np.random.default_rng(3)
    ref = rng.normal(size=(64,)).astype(np.float32)
    cand = ref.astype(ml_dtypes.bfloat16)
    out = tensoracle.compare_outputs(cand, ref)["output"]
    assert (out.dtype, out.reference_dtype) == ("bf16", "fp32")
    assert out.max_abs_error == pytest.approx(float(np.abs(cand.astype(np.float64) - ref).max()), rel=1e-12)


def test_any_layout_and_byte_order_is_read_by_value():
    rng = np.random.default_rng(5)
    base = rng.normal(size=(6, 8, 10)).astype(np.float32)
    ref = rng.normal(size=(6, 8, 10)).astype(np.float32)
    dense = tensoracle.compare_outputs(base[:, ::2, 1:], ref[:, ::2, 1:].copy(), atol=0.1, rtol=0.1)["output"]
    strided = tensoracle.compare_outputs(base[:, ::2, 1:], ref[:, ::2, 1:], atol=0.1, rtol=0.1)["output"]
    fortran = tensoracle.compare_outputs(np.asfortranarray(base[:, ::2, 1:]), ref[:, ::2, 1:].astype(">f4"), atol=0.1,
                                         rtol=0.1)["output"]
    transposed = tensoracle.compare_outputs(base.T, ref.T.copy(), atol=0.1, rtol=0.1)["output"]
    for other in (strided, fortran):
        assert other.shape == (6, 4, 9)
        assert other.max_abs_error == dense.max_abs_error
        assert other.rel_l2_error == dense.rel_l2_error
        assert other.outside_tolerance_count == dense.outside_tolerance_count
        assert other.worst_index == dense.worst_index
    assert transposed.shape == (10, 8, 6)
    assert transposed.max_abs_error == pytest.approx(float(np.abs(base - ref).max()))


def test_a_shape_mismatch_fails_the_gate_with_its_reason():
    result = tensoracle.compare_outputs(np.zeros((3, 4), np.float32), np.zeros((4, 3), np.float32), atol=1, rtol=0)
    assert not result.passed
    assert result.reasons == ["output 'output': candidate shape [3,4] differs from reference shape [4,3]"]
    out = result["output"]
    assert (out.error, out.shape, out.reference_shape) == ("shape mismatch", (3, 4), (4, 3))
    assert out.max_abs_error is None and out.outside_tolerance_count is None
    assert result.violations[0].limit == "shape"


def test_named_outputs_are_matched_by_name():
    a = np.arange(6, dtype=np.float32)
    result = tensoracle.compare_outputs({"x": a, "extra": a}, {"x": a + 1, "missing": a})
    assert sorted(result.outputs) == ["x"] and len(result) == 1 and "x" in result
    assert result.missing_outputs == ["missing"] and result.extra_outputs == ["extra"]
    assert not result.passed
    assert {v.limit for v in result.violations} == {"allow_missing_outputs", "allow_extra_outputs"}
    assert result["x"].max_abs_error == 1.0
    with pytest.raises(KeyError, match="no output 'y'"):
        result["y"]


def test_files_are_read_by_their_extension(tmp_path):
    rng = np.random.default_rng(9)
    cand = {"a": rng.normal(size=(5, 5)).astype(np.float32), "b": rng.normal(size=(3,)).astype(ml_dtypes.bfloat16)}
    ref = {"a": cand["a"] + 1e-3, "b": cand["b"]}
    in_memory = tensoracle.compare_outputs(cand, ref, atol=1e-2, rtol=0)
    tensoracle.write_npz(tmp_path / "cand.npz", cand)
    tensoracle.write_safetensors(tmp_path / "ref.safetensors", ref)
    from_files = tensoracle.compare_outputs(tmp_path / "cand.npz", str(tmp_path / "ref.safetensors"), atol=1e-2, rtol=0)
    assert from_files.to_json() == in_memory.to_json()
    # Two single arrays are one output whatever their names (the reference's name is kept).
    tensoracle.write_npy(tmp_path / "mine.npy", cand["a"])
    tensoracle.write_npy(tmp_path / "theirs.npy", ref["a"])
    single = tensoracle.compare_outputs(tmp_path / "mine.npy", tmp_path / "theirs.npy")
    assert list(single.outputs) == ["theirs"]
    assert single["theirs"].max_abs_error == in_memory["a"].max_abs_error


def test_limits_as_a_dict_or_a_file(tmp_path):
    cand, ref = np.full(4, 1.5, np.float32), np.ones(4, np.float32)
    limits = {"default": {"max_abs_error": 0.1}, "outputs": {"output": {"max_abs_error": 1.0, "metrics": {"psnr": {"min": 60}}}}}
    result = tensoracle.compare_outputs(cand, ref, limits=limits)
    assert not result.passed
    [violation] = result.violations
    assert (violation.output, violation.limit, violation.threshold) == ("output", "metrics.psnr.min", 60.0)
    expected_psnr = 10 * math.log10(1.0 / 0.25)
    assert violation.value == pytest.approx(expected_psnr)
    assert result["output"].metrics["psnr"] == pytest.approx(expected_psnr)
    (tmp_path / "limits.json").write_text(json.dumps(limits))
    assert tensoracle.compare_outputs(cand, ref, limits=tmp_path / "limits.json").to_json() == result.to_json()


def test_extra_metrics_on_request():
    rng = np.random.default_rng(2)
    ref = rng.normal(size=100)
    cand = ref + rng.normal(scale=0.01, size=100)
    out = tensoracle.compare_outputs(cand, ref, metrics=["snr", "mse"])["output"]
    mse = float(np.mean((cand - ref) ** 2))
    assert out.metrics["mse"] == pytest.approx(mse, rel=1e-12)
    assert out.metrics["snr"] == pytest.approx(10 * math.log10(np.sum(ref**2) / np.sum((cand - ref) ** 2)), rel=1e-12)


def test_bad_arguments_raise_with_the_librarys_message(tmp_path):
    a = np.zeros(3, np.float32)
    with pytest.raises(tensoracle.InvalidArgumentError, match="atol and rtol must be given together"):
        tensoracle.compare_outputs(a, a, atol=1e-3)
    with pytest.raises(tensoracle.Error, match="unknown metric|no metric|'nope'"):
        tensoracle.compare_outputs(a, a, metrics=["nope"])
    with pytest.raises(tensoracle.InvalidArgumentError, match="'complex128' has no tensoracle type"):
        tensoracle.compare_outputs(np.zeros(3, complex), a)
    with pytest.raises(tensoracle.Error, match="max_abs_errr"):
        tensoracle.compare_outputs(a, a, limits={"default": {"max_abs_errr": 1}})
    with pytest.raises(tensoracle.NotFoundError):
        tensoracle.compare_outputs(tmp_path / "absent.npz", a)


def test_fields_are_named_and_valued_as_in_the_cli_json(tmp_path, cli):
    rng = np.random.default_rng(11)
    cand, ref = random_pair(np.float32, rng)
    arrays_c = {"logits": cand, "shape_differs": np.zeros((2, 3), np.float32)}
    arrays_r = {"logits": ref, "shape_differs": np.zeros((3, 2), np.float32)}
    tensoracle.write_npz(tmp_path / "c.npz", arrays_c)
    tensoracle.write_npz(tmp_path / "r.npz", arrays_r)
    run = subprocess.run([str(cli), "compare", str(tmp_path / "c.npz"), str(tmp_path / "r.npz"), "--atol", "0.01", "--rtol",
                          "0.01", "--metric", "psnr", "--json"], capture_output=True, text=True)
    assert run.returncode == 1, run.stderr
    result = tensoracle.compare_outputs(arrays_c, arrays_r, atol=0.01, rtol=0.01, metrics=["psnr"])
    cli_json = json.loads(run.stdout)
    assert json.loads(result.to_json()) == cli_json
    for name, fields in cli_json["outputs"].items():
        out = result[name]
        for key, value in fields.items():
            actual = getattr(out, key)
            expected = json_value(value)
            if key == "metrics":
                expected = {k: json_value(v) for k, v in value.items()}
            if isinstance(expected, float) and math.isnan(expected):
                assert math.isnan(actual), key
            elif isinstance(actual, list):
                assert tuple(actual) == expected, key
            else:
                assert actual == expected, (name, key)
    assert result.passed == cli_json["passed"]
    assert result.reasons == [v["message"] for v in cli_json["violations"]]
    assert result.table().startswith("output")


def test_model_specific_metrics_from_python_are_computed_and_gated():
    def top1_agreement(candidate, reference):
        return float(np.mean(candidate.argmax(-1) == reference.argmax(-1)))

    reference = np.eye(4, dtype=np.float32)
    candidate = reference.copy()
    candidate[3] = [0.9, 0, 0, 0.1]  # the last row's class changes
    limits = {"default": {"allow_non_finite": False, "metrics": {"top1": {"min": 1.0}}}}
    result = tensoracle.compare_outputs({"probs": candidate}, {"probs": reference}, limits=limits,
                                        custom_metrics={"top1": top1_agreement})
    assert result["probs"].metrics["top1"] == 0.75
    [violation] = result.violations
    assert (violation.limit, violation.value, violation.threshold) == ("metrics.top1.min", 0.75, 1.0)

    seen = []
    tensoracle.compare_outputs(candidate.astype(ml_dtypes.bfloat16), reference,
                               custom_metrics={"types": lambda c, r: seen.append((c.dtype, r.dtype)) or 0.0})
    assert seen == [(np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32))]


def test_a_failing_metric_callable_raises_with_its_traceback():
    def broken(candidate, reference):
        raise ArithmeticError("no metric today")

    with pytest.raises(tensoracle.InvalidArgumentError) as caught:
        tensoracle.compare_outputs(np.zeros(3), np.zeros(3), custom_metrics={"broken": broken})
    assert "metric 'broken'" in str(caught.value)
    assert "Traceback" in str(caught.value) and "ArithmeticError: no metric today" in str(caught.value)
    with pytest.raises(tensoracle.InvalidArgumentError, match="returned None, not a number"):
        tensoracle.compare_outputs(np.zeros(3), np.zeros(3), custom_metrics={"none": lambda c, r: None})
    with pytest.raises(tensoracle.InvalidArgumentError, match="Bad-Name|name"):
        tensoracle.compare_outputs(np.zeros(3), np.zeros(3), custom_metrics={"Bad-Name": lambda c, r: 0.0})
