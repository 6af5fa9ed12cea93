"""The acquisition branch of ``tpguard bench cases`` and ``tpguard bench check`` (its cases have
their own type, so the two commands hand the suite name over here)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from .._suite_cli import echo_case, echo_json, print_problems
from .files import default_files_dir
from .generator import SUITE_NAME, generate
from .stats import acq_suite_stats

__all__ = ["cases_command", "check_command", "is_acquisition"]


def is_acquisition(name: str) -> bool:
    return name.strip().lower() == SUITE_NAME


def cases_command(seed: int, stats: bool, show: str | None, as_json: bool) -> None:
    out = Console()
    suite = generate(seed)
    if show is not None:
        echo_case(suite, show)
        return
    data = acq_suite_stats(suite)
    if as_json:
        echo_json(data)
        return
    if not stats:
        for c in suite:
            out.print(f"{c.id}\t{c.domain}\tTask {c.behaviour}\t{c.file_kind or '-'}", highlight=False)
        return
    head = Table(title=f"Suite {SUITE_NAME} (seed {seed})")
    keys = ("cases", "behaviours", "domains", "tools", "marker_subset", "k_acq_items",
            "k_disc_targets", "required_writes")
    for k in keys:
        head.add_column(k.replace("_", " ").capitalize(), justify="right")
    head.add_row(*(str(data[k]) for k in keys))
    out.print(head)
    for title, key in (("Cases per behaviour", "per_behaviour"), ("Cases per domain", "per_domain"),
                       ("Task 3 files", "files")):
        t = Table("", "Cases", title=title)
        for k, n in data[key].items():
            t.add_row(k, str(n))
        out.print(t)


def check_command(seed: int, as_json: bool, files_dir: Path | None = None) -> None:
    """Run the ten checks (and the contract tests) on every case; exit 1 when any case fails."""
    from .validate import ACQ_CHECKS, check_acq_case

    suite = generate(seed)
    where = files_dir or default_files_dir(seed)
    problems = []
    seen: Counter[str] = Counter(c.id for c in suite)
    for case in suite:
        problems += check_acq_case(case, where)
    failed = sorted({p.case_id for p in problems} | {i for i, n in seen.items() if n > 1})
    if as_json:
        typer.echo(json.dumps({"suite": SUITE_NAME, "seed": seed, "cases": len(suite),
                               "checks": list(ACQ_CHECKS), "failed_cases": len(failed),
                               "problems": [p.to_dict() for p in problems]}, indent=2))
    else:
        print_problems(Console(), problems, len(suite), len(failed), checks=len(ACQ_CHECKS))
    raise typer.Exit(1 if failed else 0)
