"""The four-stage workflow runner, as `tensoracle optimize PIPELINE.toml` (docs/workflow.md)."""

import os
from typing import Callable, Optional, Sequence, Union

from ._tensoracle import Pipeline, WorkflowOutcome, run_workflow

__all__ = ["Pipeline", "WorkflowOutcome", "optimize", "run_workflow"]


def optimize(pipeline: Union[str, "os.PathLike[str]"], out: Union[str, "os.PathLike[str]", None] = None, *,
             backend: Optional[str] = None, package: Optional[str] = None,
             plugins: Optional[Sequence[Union[str, "os.PathLike[str]"]]] = None, policy: str = "reuse",
             progress: Optional[Callable[[str], None]] = None, quiet: bool = False) -> WorkflowOutcome:
    """Loads the pipeline file, runs its stages and, with `out`, writes report.json and report.html
    there. `backend` and `package` override the pipeline's; `plugins` are loaded after the
    pipeline's [model] plugins (`--plugin`). outcome.exit_status is the command's
    (0 accepted, 1 a gate rejected)."""
    outcome = run_workflow(Pipeline.load(pipeline), backend=backend, package=package, plugins=plugins, policy=policy,
                           progress=progress, quiet=quiet)
    if out is not None:
        outcome.write_reports(out)
    return outcome
