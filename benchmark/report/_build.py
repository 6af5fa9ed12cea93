"""Build every report of a run directory: tables, figures, report.html and report.md."""

from __future__ import annotations

import gc
import time
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path

from ._acquisition import acquisition_csv
from ._collect import collect
from ._crosstab import cross_tabs
from ._exposure import exposure_csv
from ._figures import write_figures
from ._html import render_html
from ._load import load_cases, load_run
from ._markdown import render_markdown
from ._tables import write_csv

__all__ = ["build_reports"]


@contextmanager
def _collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while the reports build; the collector resumes after.

    ``bench run`` builds its reports in the process that ran the cases: ~370k live objects on a
    quick run, more on a 300-case run with one worker, which the collections triggered by the
    report's own allocations walked again and again (~1 of a quick run's ~4.7 report CPU-s;
    ``gc.freeze`` of that heap helped the quick run and cost the 300-case run more, measured
    in docs/perf.md). The build's data is acyclic and freed by reference counting; what cycles it
    makes (matplotlib's and plotly's figure objects, a fixed number per report) wait for the next
    collection (peak RSS of the quick run's build +17 MB against `gc.freeze`). A caller that
    disabled the collector keeps it off."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def build_reports(run_dir: Path, *, figures: bool = True,
                  kept: Collection[str] | None = None) -> dict[str, Path]:
    """(Re)build every report of a run directory; returns ``{relative name: path}`` of what was
    written: ``summary.json`` (only when it was missing or stale), ``report.md``, ``report.html``,
    ``tables/*.csv`` and ``figures/*.png``. ``kept``: the only files that will stay (a share),
    so report.md's file list names no others."""
    with _collector_paused():
        return _build(Path(run_dir), figures, kept)


def _build(run_dir: Path, figures: bool, kept: Collection[str] | None) -> dict[str, Path]:
    started = time.perf_counter()
    data = load_run(run_dir)
    cases, case_notes = load_cases(data)
    data.notes.extend(case_notes)
    tabs = cross_tabs(data, cases)
    tables = collect(data, tabs)
    written: dict[str, Path] = {}
    for folder, pattern in (("tables", "*.csv"), ("figures", "*.png")):  # ours: no stale outputs
        for old in (run_dir / folder).glob(pattern):
            old.unlink()
    if data.summary_rebuilt:
        written["summary.json"] = run_dir / "summary.json"
    legacy = tables.csv_tables() if data.legacy else []  # acquisition/exposure-only: own sections
    for table in [*legacy, *acquisition_csv(data.summary), *exposure_csv(data.summary)]:
        path = write_csv(table, run_dir / "tables")
        written[f"tables/{path.name}"] = path
    if figures:
        pngs, fig_notes = write_figures(data, tables, tabs, run_dir / "figures")
        data.notes.extend(fig_notes)
        written.update({f"figures/{p.name}": p for p in pngs})
    html_path = run_dir / "report.html"
    html_path.write_text(render_html(data, tables, tabs, cases), encoding="utf-8")
    written["report.html"] = html_path
    md_path = run_dir / "report.md"
    names = sorted(n for n in [*written, "report.md"] if kept is None or n in kept)
    data.notes.append(f"Reports built in {time.perf_counter() - started:.1f} s.")
    md_path.write_text(render_markdown(data, tables, names), encoding="utf-8")
    written["report.md"] = md_path
    return written
