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
def deformable_package() -> pathlib.Path:
    path = build_dir() / "examples" / "libtensoracle_example_deformable.so"
    assert path.is_file(), f"{path} is missing: build tensoracle_example_deformable (scripts/test-python does)"
    return path


@pytest.fixture(scope="session")
def bundled_plugins_library() -> pathlib.Path:
    """libtensoracle_plugins.so (plugins/: tensoracle::dcnv2)."""
    path = build_dir() / "plugins" / "libtensoracle_plugins.so"
    assert path.is_file(), f"{path} is missing: build tensoracle_plugins (scripts/test-python does)"
    return path


@pytest.fixture(scope="session")
def test_plugins_library() -> pathlib.Path:
    """The test plugin library (tests/host/plugin/test_plugins: test::scale_add, y = x * scale + b),
    as the C++ tests load it: $TENSORACLE_TEST_PLUGINS_LIBRARY (scripts/test-python sets it after
    building tensoracle_test_plugins), else the build directory's copy. Skipped only when neither
    exists (a build without tests has none); a path given explicitly must exist."""
    given = os.environ.get("TENSORACLE_TEST_PLUGINS_LIBRARY")
    if given:
        assert pathlib.Path(given).is_file(), f"TENSORACLE_TEST_PLUGINS_LIBRARY={given} does not exist"
        return pathlib.Path(given)
    path = build_dir() / "tests" / "host" / "plugin" / "libtensoracle_test_plugins.so"
    if not path.is_file():
        pytest.skip(f"{path} is absent: build the target tensoracle_test_plugins (scripts/test-python does) or set "
                    "TENSORACLE_TEST_PLUGINS_LIBRARY")
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
