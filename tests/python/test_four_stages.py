"""examples/python/four_stages.py, the seed's workflow as a Python script, runs end to end on the cpu
backend, and docs/python.md shows it (and tinynet.py) exactly as they are."""

import re
import subprocess
import sys

from conftest import REPO

EXAMPLES = REPO / "examples" / "python"


def test_the_four_stages_run_on_the_cpu_backend(cache_dir):
    run = subprocess.run([sys.executable, str(EXAMPLES / "four_stages.py"), "--iterations", "5"], capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    out = run.stdout
    for stage in ("== stage 1", "== stage 2", "== stage 3", "== stage 4", "== decision: "):
        assert stage in out, stage
    assert "tinynet_py_fp16: accepted" in out and "tinynet_py_bf16: accepted" in out
    assert "composed softmax: accepted" in out
    assert "plugin bundle: inspections pass" in out
    assert out.count("PASSED") == 4  # stage 1, both stage-2 candidates, the stage-3 replacement


def test_the_docs_show_the_scripts_as_they_are():
    docs = (REPO / "docs" / "python.md").read_text()
    shown = dict(re.findall(r"<!-- file: (\S+) -->\n```python\n(.*?)```\n", docs, re.S))
    assert sorted(shown) == ["examples/python/four_stages.py", "examples/python/tinynet.py"]
    for path, text in shown.items():
        assert text == (REPO / path).read_text(), f"docs/python.md shows an outdated {path}"
