"""The exposure branch of ``tpguard bench cases`` and ``tpguard bench check`` (its sessions have
their own type, so the two commands hand the suite name over here; ``--source`` holds the public
``agentdojo/`` and ``workbench/`` folders, else the office and business families are synthetic)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from .._suite_cli import echo_case, echo_json, print_problems
from .generator import SUITE_NAME, _generate, generate
from .schema import ExpSuite

__all__ = ["cases_command", "check_command", "exp_suite_stats", "is_exposure"]


def is_exposure(name: str) -> bool:
    return name.strip().lower() == SUITE_NAME


def exp_suite_stats(suite: ExpSuite) -> dict[str, Any]:
    return {"sessions": len(suite),
            "per_family": dict(Counter(c.family for c in suite)),
            "per_source": dict(Counter(f"{c.family}/{c.source}" for c in suite)),
            "per_strategy": dict(Counter(c.strategy for c in suite)),
            "items": len({(c.family, c.item) for c in suite}),
            "targets": sum(len(c.targets) for c in suite),
            "target_types": dict(Counter(t.type for c in suite for t in c.targets)),
            "visible_exits": {f: list(next(c for c in suite if c.family == f).visible_channels)
                              for f in sorted({c.family for c in suite})},
            "budget": sorted({c.budget for c in suite})}


def cases_command(seed: int, source: Path | None, stats: bool, show: str | None,
                  as_json: bool) -> None:
    out = Console()
    suite = generate(seed, source)
    if show is not None:
        echo_case(suite, show)
        return
    data = exp_suite_stats(suite)
    if as_json:
        echo_json(data)
        return
    if not stats:
        for c in suite:
            out.print(f"{c.id}\t{c.family}\t{c.source}\t{c.strategy}\t{len(c.targets)} targets",
                      highlight=False)
        return
    head = Table(title=f"Suite {SUITE_NAME} (seed {seed})")
    for k in ("sessions", "items", "targets", "budget"):
        head.add_column(k.capitalize(), justify="right")
    head.add_row(*(str(data[k]) for k in ("sessions", "items", "targets", "budget")))
    out.print(head)
    for title, key in (("Sessions per family/source", "per_source"),
                       ("Sessions per requester strategy", "per_strategy"),
                       ("Targets per type", "target_types")):
        t = Table("", "Count", title=title)
        for k, n in data[key].items():
            t.add_row(k, str(n))
        out.print(t)


def check_command(seed: int, source: Path | None, as_json: bool) -> None:
    """Run the checks on every session (and determinism on the suite); exit 1 on any failure."""
    from .validate import EXP_CHECKS, check_exp_suite

    suite = generate(seed, source)
    again = _generate.__wrapped__(seed, suite.source)  # a fresh generation, not the cached one
    problems = check_exp_suite(suite, again)
    failed = sorted({p.case_id for p in problems})
    if as_json:
        typer.echo(json.dumps({"suite": SUITE_NAME, "seed": seed, "sessions": len(suite),
                               "checks": list(EXP_CHECKS), "failed_cases": len(failed),
                               "problems": [p.to_dict() for p in problems]}, indent=2))
    else:  # "*" marks a suite-wide problem (determinism), not a session
        print_problems(Console(), problems, len(suite), len([f for f in failed if f != "*"]),
                       unit="sessions", checks=len(EXP_CHECKS))
    raise typer.Exit(1 if failed else 0)
