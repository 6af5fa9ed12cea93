"""``tpguard bench report DIR`` (rebuild a run's reports), ``tpguard bench compare DIR1 DIR2``
(the change of every summary key between two runs) and ``tpguard bench share DIR OUT`` (a
value-free, resumable copy of a run). ``register(bench_app)`` adds them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from ._common import out_console

__all__ = ["compare", "register", "report", "share"]

RunDir = Annotated[Path, typer.Argument(help="A benchmark run directory (holds records.jsonl).")]


def report(
    run_dir: RunDir,
    no_figures: Annotated[bool, typer.Option("--no-figures", help="Skip figures/*.png.")] = False,
) -> None:
    """Rebuild report.md, report.html, tables/*.csv and figures/*.png of a run (and summary.json
    when it is missing or older than records.jsonl); prints the paths written."""
    from ..report import RunDirError, build_reports

    out, err = out_console(), Console(stderr=True)
    try:
        if err.is_terminal:  # build_reports has no steps to count: a spinner says it works
            with err.status(f"building the reports of {run_dir}"):
                paths = build_reports(run_dir, figures=not no_figures)
        else:
            paths = build_reports(run_dir, figures=not no_figures)
    except RunDirError as e:
        err.print(f"[red]error:[/] {e}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    for name in sorted(paths):
        out.print(str(paths[name]), highlight=False, soft_wrap=True)


def compare(
    run1: RunDir,
    run2: RunDir,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print the comparison as JSON.", metavar="")] = False,
    unpaired: Annotated[bool, typer.Option(
        "--unpaired", help="When the runs cover different cases, compare the whole runs anyway "
                           "(default: only the cases both runs scored).", metavar="")] = False,
) -> None:
    """Per agent × guard row present in both runs, Δ = run2 − run1 of every summary key of the
    runs' suite; rows present in only one run are listed. Runs of different suites are refused
    (exit 2). A case-run pairs with another only when suite, seed and case agree: runs over
    different case sets (or seeds) are unpaired — by default only their common case-runs are
    compared, and a line says so."""
    from ..report import RunDirError, compare_runs, comparison_table

    out, err = out_console(), Console(stderr=True)
    try:
        result = compare_runs(run1, run2, common_only=not unpaired)
    except RunDirError as e:
        err.print(f"[red]error:[/] {e}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    if not result["paired"]:
        c = result["cases"]
        how = ("comparing the whole runs (--unpaired)" if unpaired else
               f"comparing the {c['common']} common cases only (--unpaired compares the whole runs)")
        seeds = result["seeds"]
        why = (f"; seeds differ (A: {', '.join(map(str, seeds['run1']))}, B: "
               f"{', '.join(map(str, seeds['run2']))}) and a case-run pairs only with the same "
               "suite, seed and case" if seeds["run1"] != seeds["run2"] else "")
        err.print(f"[yellow]unpaired:[/] the runs cover different case sets (A: {c['run1']}, "
                  f"B: {c['run2']}, common: {c['common']}){why}; {how}", highlight=False,
                  soft_wrap=True)
    if as_json:
        typer.echo(json.dumps(result, indent=1))
        return
    out.print(f"Δ = {result['run2']} − {result['run1']}", highlight=False, soft_wrap=True)
    if not result["rows"]:
        out.print("No agent × guard row is in both runs.", highlight=False)
    for name, keys in result["groups"]:
        out.print(comparison_table(result, tuple(keys), title=f"{result['suite']}: {name}"))
    for side in ("only_in_run1", "only_in_run2"):
        for r in result[side]:
            out.print(f"{side.replace('_', ' ')}: {r['agent']} / {r['guard']} ({r['suite']})",
                      highlight=False)
    for note in result["notes"]:
        out.print(f"[dim]{note}[/]", highlight=False)


def share(
    run_dir: RunDir,
    out_dir: Annotated[Path, typer.Argument(help="Where the share goes (created; an earlier "
                                                 "share there is replaced).")],
) -> None:
    """Write a value-free copy of a run — records.jsonl without arguments, results or answers,
    run.json, summary.json, report.md — checked for every written form of every atom of its
    cases; exit 1 (nothing written) if one is found. Copied into a working directory, the share
    resumes with `bench run --out`. Prints the paths written."""
    from ..report import RunDirError, ShareRefused, share_run

    out, err = out_console(), Console(stderr=True)
    try:
        paths = share_run(run_dir, out_dir)
    except ShareRefused as e:
        err.print(f"[red]refused:[/] {e}", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None
    except RunDirError as e:
        err.print(f"[red]error:[/] {e}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    for name in sorted(paths):
        out.print(str(paths[name]), highlight=False, soft_wrap=True)


def register(bench_app: typer.Typer) -> None:
    """Add ``report``, ``compare`` and ``share`` to the ``tpguard bench`` app."""
    bench_app.command("report")(report)
    bench_app.command("compare")(compare)
    bench_app.command("share")(share)
