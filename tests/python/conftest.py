"""Shared fixtures of the Python package's tests (scripts/test-python runs them against the
installed wheel). The example model packages and the CLI come from the release preset's build,
$TENSORACLE_BUILD_DIR (default build/release), which scripts/test-python builds first."""

import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"


def build_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("TENSORACLE_BUILD_DIR", REPO / "build" / "release"))


@pytest.fixture(scope="session")
def cli() -> pathlib.Path:
    path = build_dir() / "tools" / "tensoracle" / "tensoracle"
    assert path.is_file(), f"{path} is missing: build the release preset's tensoracle_cli (scripts/test-python does)"
    return path


@pytest.fixture(scope="session")
def tinynet_package() -> pathlib.Path:
    path = build_dir() / "examples" / "libtensoracle_example_tinynet.so"
    assert path.is_file(), f"{path} is missing: build tensoracle_example_tinynet (scripts/test-python does)"
    return path


@pytest.fixture(scope="session")
def tinynet_io() -> dict:
    """The committed fixture: inputs ("image") and PyTorch's fp32 outputs ("probs")."""
    import tensoracle

    return tensoracle.read_arrays(FIXTURES / "examples" / "tinynet" / "io.safetensors")


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch) -> pathlib.Path:
    """Every test has its own engine cache, so none reuses another's engines."""
    path = tmp_path / "cache"
    monkeypatch.setenv("TENSORACLE_CACHE_DIR", str(path))
    return path
