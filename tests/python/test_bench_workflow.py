"""tensoracle.bench (the timing harness) and tensoracle.workflow (the four-stage runner) from
Python, on the tinynet package and its pipeline on the cpu backend, and the deformable package
with the bundled plugin library passed as plugins=."""

import json

import numpy as np
import pytest

import tensoracle
from tensoracle import bench, workflow

from conftest import REPO


@pytest.fixture
def engine(tinynet_package):
    build = tensoracle.ModelPackage.load(tinynet_package).engine_build("tinynet")
    build.quiet = True
    return tensoracle.open_engine(build).engine


def quick_settings():
    settings = bench.BenchSettings()
    settings.warmup, settings.iterations, settings.throughput_group = 1, 6, 2
    settings.load_check = False  # the shared test machine is never idle
    return settings


def test_bench_engine_reports_every_mode(engine, tinynet_io):
    report = bench.bench_engine(engine, {"image": tinynet_io["image"]}, quick_settings(), batch=4)
    assert report.backend == engine.backend and report.batch == 4 and report.valid
    assert [run.mode for run in report.runs] == ["latency", "throughput"]
    for run in report.runs:
        assert run.clock == "steady_clock" and run.execution == "host"
        assert len(run.samples_ms) == 6 and run.stats.count == 6
        assert 0 < run.stats.min_ms <= run.stats.median_ms <= run.stats.max_ms
        assert run.stats.median_ms == pytest.approx(float(np.median(run.samples_ms)))
    assert report.load.status == "off"
    parsed = json.loads(report.to_json())
    assert parsed["batch"] == 4 and "latency" in report.to_text()


def test_bench_ab_on_synthetic_inputs(engine):
    settings = quick_settings()
    settings.modes = ["latency"]
    report = bench.bench_ab(engine, engine, settings=settings)
    [run] = report.runs
    assert run.mode == "latency" and len(run.candidate.samples_ms) == len(run.baseline.samples_ms) == 6
    assert run.ratio.low <= run.ratio.estimate <= run.ratio.high
    with pytest.raises(tensoracle.InvalidArgumentError, match="sometimes"):
        settings.modes = ["sometimes"]


def test_optimize_runs_the_pipeline_and_writes_its_reports(tinynet_package, tmp_path):
    lines = []
    outcome = workflow.optimize(REPO / "examples" / "tinynet" / "pipeline.toml", tmp_path / "report",
                                package=str(tinynet_package), progress=lines.append)
    assert outcome.exit_status in (0, 1)  # stage 4's timing decides between them on a busy host
    report = json.loads(outcome.report_json)
    decisions = {(s["stage"], c["name"]): c["decision"] for s in report["stages"] for c in s["candidates"]}
    assert decisions[(1, "tinynet")] == "accepted"
    assert decisions[(2, "fp16")] == "accepted" and decisions[(2, "bf16")] == "rejected"
    assert decisions[(3, "recomposed")] == "accepted"
    assert outcome.final_implementation and "stage 1" in outcome.summary
    assert (tmp_path / "report" / "report.json").read_text() == outcome.report_json
    assert (tmp_path / "report" / "report.html").read_text() == outcome.report_html
    assert lines, "progress lines reach Python"


def test_a_bad_pipeline_raises_naming_the_file_and_key(tmp_path):
    (tmp_path / "p.toml").write_text('title = "x"\n[model]\npackage = "p.so"\nbackend = "cpu"\nfrobnicate = 1\n')
    with pytest.raises(tensoracle.InvalidArgumentError, match=r"p\.toml.*frobnicate"):
        workflow.Pipeline.load(tmp_path / "p.toml")


def deformable_pipeline(tmp_path):
    """Stage 1 the composition, stage 3 the tensoracle::dcnv2 plugin form; no [model] plugins."""
    fixture = REPO / "tests" / "fixtures" / "examples" / "deformable" / "io.safetensors"
    (tmp_path / "p.toml").write_text(f"""
[model]
package = "unused.so"
[inputs]
file = "{fixture}"
arrays = ["image"]
[reference]
file = "{fixture}"
arrays = ["out"]
[stage1]
graph = "deformable"
limits = {{ default = {{ max_abs_error = 1e-5 }} }}
[[stage3.candidate]]
name = "dcnv2_plugin"
graph = "deformable_plugin"
""")
    return workflow.Pipeline.load(tmp_path / "p.toml")


def test_run_workflow_loads_the_plugin_libraries_it_is_given(deformable_package, bundled_plugins_library, tmp_path):
    pipeline = deformable_pipeline(tmp_path)
    assert pipeline.plugins == []
    outcome = workflow.run_workflow(pipeline, package=str(deformable_package), plugins=[bundled_plugins_library],
                                    quiet=True)
    assert outcome.exit_status == 0, outcome.summary
    report = json.loads(outcome.report_json)
    assert [s["candidates"][0]["decision"] for s in report["stages"] if s["stage"] == 3] == ["accepted"]
    (library,) = report["model"]["plugin_libraries"]
    assert library["path"] == str(bundled_plugins_library)
    assert library["plugins"][0].startswith("tensoracle::dcnv2 ")

    without = workflow.run_workflow(pipeline, package=str(deformable_package), quiet=True)
    assert without.exit_status == 1
    assert "tensoracle::dcnv2" in without.summary

    with pytest.raises(tensoracle.Error, match=r"plugins: .*libnothing\.so"):
        workflow.run_workflow(pipeline, package=str(deformable_package), plugins=[tmp_path / "libnothing.so"])
