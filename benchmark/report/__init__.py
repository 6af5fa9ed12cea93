"""Benchmark reports: markdown and CSV tables shaped like seed ``000_*`` Tables 7–10 (and B.12–B.14,
D.15), a self-contained HTML report (privacy–utility scatter, sink and free-text-field bars,
transition table, atom type × sink heatmap, per-case audit view) and PNG figures; plus the diff of
two runs. See ``docs/reports.md``.

    paths = build_reports(Path("runs/quick"))      # {"report.md": …, "report.html": …, …}
    diff = compare_runs("runs/a", "runs/b")         # {"rows": [{…, "delta": {"FOR": …}}], …}
    share_run("runs/quick", "docs/results/quick")   # value-free, checked, resumable copy
"""

from __future__ import annotations

from ._build import build_reports
from ._collect import ReportTables
from ._compare import KEY_GROUPS, CompareRefused, compare_runs, comparison_table
from ._load import RunData, RunDirError, load_run
from ._share import SHARED_FILES, ShareRefused, share_run
from ._tables import Table

__all__ = [
    "KEY_GROUPS",
    "SHARED_FILES",
    "CompareRefused",
    "ReportTables",
    "RunData",
    "RunDirError",
    "ShareRefused",
    "Table",
    "build_reports",
    "compare_runs",
    "comparison_table",
    "load_run",
    "share_run",
]
