"""``--source``: checked the same way for every suite before anything runs.

* ``public-derived`` reads it (required; :func:`~..cases.registry.load_suite` says what it needs);
* ``exposure`` reads ``agentdojo/`` and ``workbench/`` from it when given — a folder holding
  neither would silently fall back to the synthetic families, so it is refused;
* ``need-to-know`` and ``acquisition`` are generated and read no public data: a ``--source`` there
  would be ignored, so it is refused rather than recorded as if it mattered.

A refusal is a :class:`~._errors.UsageError` (exit 2) naming the folder and what was expected.
"""

from __future__ import annotations

from pathlib import Path

from ._errors import UsageError
from .config import RunConfig

__all__ = ["check_source"]

_GENERATED = ("need-to-know", "acquisition")


def check_source(config: RunConfig) -> None:
    """Raise :class:`UsageError` when ``--source`` does not exist, holds no data the suite reads,
    or is given to a suite that reads none."""
    source = config.source
    if source is None:
        return
    path = Path(source)
    if config.suite in _GENERATED:
        raise UsageError(f"--source {source}: the {config.suite} suite is generated and reads no "
                         "public data; drop --source")
    if not path.is_dir():
        raise UsageError(f"--source {source}: not a directory (it should hold the public data "
                         "folders, e.g. ../shared/data/public)")
    if config.suite == "exposure":
        from ..cases.exposure._public import has_agentdojo, has_workbench

        if not (has_agentdojo(path) or has_workbench(path)):
            raise UsageError(f"--source {source}: holds neither agentdojo/suites/workspace nor "
                             "workbench/processed, the exposure suite's public data; without "
                             "--source it runs its synthetic families")
