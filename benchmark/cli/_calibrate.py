"""``tpguard bench calibrate [--cases N | --all] [--seed N] [--json] [--check]``: the leaky
reference agent's fitted-vs-paper table (seed ``000_*`` Table 8, Figure 7a/b, Table 9, Table 10)."""

from __future__ import annotations

import json
from typing import Annotated

import typer

__all__ = ["calibrate"]


def calibrate(
    cases: Annotated[int, typer.Option(
        "--cases", min=23, help="About N need-to-know cases, the same number per domain "
        "(230 = 10 per domain).")] = 230,
    all_cases: Annotated[bool, typer.Option("--all", help="All 1,150 cases (slower, steadier).")]
    = False,
    seed: Annotated[int, typer.Option("--seed", help="Agent seed.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="JSON output.")] = False,
    check: Annotated[bool, typer.Option(
        "--check", help="Exit 1 when a judged row is outside its tolerance.")] = False,
) -> None:
    """Run the leaky profiles with no guard on the need-to-know suite and print the fitted vs
    paper table per profile, sink, free-text field, transition type and domain. Exit 0 unless
    --check finds a failing row."""
    from ..agents.leaky.calibrate import calibration, render_markdown, stratified
    from ..cases.need_to_know import generate

    suite = generate(seed=0)
    chosen = list(suite.cases) if all_cases else stratified(suite.cases, cases)
    result = calibration(chosen, seed=seed)
    failed = [r for r in result["rows"] if r.passed is False]
    if as_json:
        typer.echo(json.dumps({
            "cases": result["cases"], "seed": seed,
            "rows": [r.to_dict() for r in result["rows"]],
            "profiles": {p: {k: row.get(k) for k in ("n", "FOR", "FreeTextFOR", "FreeTextFOR_field",
                                                      "FTSlotRate", "Task", "Workflow", "GoldArg",
                                                      "TaskSuccess", "MT-POI")}
                         for p, row in result["profiles"].items()},
            "failed": len(failed),
        }, indent=2, ensure_ascii=False))
    else:
        typer.echo(render_markdown(result))
    raise typer.Exit(1 if check and failed else 0)
