"""Cubin bundles from Python: tensoracle.producer.compile_bundle and tensoracle.bundle.inspect_bundle /
inspect_wheel, including a tampered bundle and hostile wheels (failed checks are reports, not
exceptions). Needs nvcc (as the C++ bundle tests do)."""

import json
import shutil
import zipfile

import pytest

import tensoracle
from tensoracle import bundle, producer

from conftest import REPO

EXAMPLE = REPO / "examples" / "bundle_example"
KERNELS = ["scale_bias", "gated_residual"]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    out = tmp_path_factory.mktemp("bundle") / "example"
    manifest = producer.compile_bundle(name="example", version="1.0.0",
                                       sources=[EXAMPLE / "kernels" / "elementwise.cu", EXAMPLE / "kernels" / "binary.cu"],
                                       architectures=["sm_90"], out=out)
    return out, manifest


@pytest.fixture
def bundle_copy(compiled, tmp_path):
    out = tmp_path / "copy"
    shutil.copytree(compiled[0], out)
    return out


def declaration(architectures):
    decl = json.loads((EXAMPLE / "plugin.json").read_text())
    decl["architectures"] = architectures
    return decl


def test_compile_writes_the_manifest_it_returns(compiled):
    out, manifest = compiled
    assert (manifest.name, manifest.version) == ("example", "1.0.0")
    assert sorted(c.path for c in manifest.cubins) == ["sm_90/binary.cubin", "sm_90/elementwise.cubin"]
    assert all(c.arch == "sm_90" and c.size == (out / c.path).stat().st_size for c in manifest.cubins)
    assert set(KERNELS) <= {k for c in manifest.cubins for k in c.kernels}
    assert bundle.BundleManifest.read(out).to_json() == manifest.to_json()
    assert "Cuda compilation tools" in manifest.compiler_version


def test_a_good_bundle_passes_every_check(compiled):
    report = bundle.inspect_bundle(compiled[0], plugin=declaration(["sm_90"]))
    assert report.passed, report.to_text()
    names = {c.name for c in report.checks}
    assert {"manifest_schema", "path_safety", "cubin_sha256", "cubin_elf", "cubin_arch", "plugin_kernels"} <= names
    assert all(c.passed for c in report["cubin_sha256"])
    assert report.check("no_tf32") == []


def test_a_plugin_needing_more_architectures_fails_its_check(compiled):
    report = bundle.inspect_bundle(compiled[0], plugin=EXAMPLE / "plugin.json")  # declares sm_80 ... sm_120
    assert not report.passed
    assert {c.name for c in report.failures} == {"plugin_architectures"}, report.to_text()
    assert sorted(c.subject for c in report.failures) == ["sm_100", "sm_120", "sm_80", "sm_86", "sm_89"]


def test_a_tampered_cubin_is_reported(bundle_copy):
    cubin = bundle_copy / "sm_90" / "elementwise.cubin"
    data = bytearray(cubin.read_bytes())
    data[-8] ^= 0x5A
    cubin.write_bytes(bytes(data))
    report = bundle.inspect_bundle(bundle_copy)
    assert not report.passed
    [failure] = [c for c in report.failures if c.name == "cubin_sha256"]
    assert failure.subject == "sm_90/elementwise.cubin"
    assert '"passed": false' in report.to_json()


def test_an_unsafe_manifest_path_is_reported(bundle_copy):
    manifest = (bundle_copy / "manifest.json").read_text()
    (bundle_copy / "manifest.json").write_text(manifest.replace('"sm_90/binary.cubin"', '"../binary.cubin"'))
    report = bundle.inspect_bundle(bundle_copy)
    assert not report.passed and any(c.name == "path_safety" for c in report.failures)


def test_wheels_are_inspected_in_place(compiled, tmp_path):
    wheel = tmp_path / "example_plugin-1.0-py3-none-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for file in compiled[0].rglob("*"):
            archive.write(file, "example_plugin/bundle/" + file.relative_to(compiled[0]).as_posix())
    report = bundle.inspect_wheel(wheel, plugin=declaration(["sm_90"]))
    assert report.passed, report.to_text()
    assert any(c.subject.startswith("example_plugin/bundle/") for c in report.checks)

    with zipfile.ZipFile(wheel, "a") as archive:
        archive.writestr("../../evil.sh", "#!/bin/sh\n")
    hostile = bundle.inspect_wheel(wheel)
    assert not hostile.passed and [c.name for c in hostile.failures] == ["wheel_entry_path"]

    (tmp_path / "not_a.whl").write_bytes(b"PK\x03\x04 but nothing else")
    broken = bundle.inspect_wheel(tmp_path / "not_a.whl")
    assert not broken.passed and broken.failures[0].name == "wheel_archive"


def test_what_cannot_be_examined_raises(tmp_path):
    with pytest.raises(tensoracle.Error, match="absent"):
        bundle.inspect_bundle(tmp_path / "absent")
    with pytest.raises(tensoracle.InvalidArgumentError, match="sm_9x"):
        producer.compile_bundle(name="x", version="1", sources=[EXAMPLE / "kernels" / "binary.cu"], architectures=["sm_9x"],
                                out=tmp_path / "x")
    with pytest.raises(tensoracle.Error, match="nothing_here.json"):
        bundle.inspect_bundle(tmp_path, plugin=tmp_path / "nothing_here.json")
