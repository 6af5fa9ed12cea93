"""``tpguard bench calibrate [--suite need-to-know|acquisition] [--cases N | --all] [--seed N]
[--json] [--check]``: the leaky reference agent's fitted-vs-paper table — need-to-know against seed
``000_*`` (Table 8, Figure 7a/b, Table 9, Table 10), acquisition against seed ``001_*`` (overall
ranges, per-behaviour, per-domain and marker PLR, ΔC). Tolerances are n-aware."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from ._common import fail

__all__ = ["calibrate"]


def calibrate(
    suite: Annotated[str, typer.Option(
        "--suite", help="need-to-know (seed 000's tables) or acquisition (seed 001's).")]
    = "need-to-know",
    cases: Annotated[int | None, typer.Option(
        "--cases", min=23, help="need-to-know: about N cases, the same number per domain (default "
        "230 = 10 per domain); acquisition: the first N round-robin over the behaviours (default "
        "all 1,182).")] = None,
    all_cases: Annotated[bool, typer.Option("--all", help="All 1,150 cases (slower, steadier).")]
    = False,
    seed: Annotated[int, typer.Option("--seed", help="Agent seed.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="JSON output.")] = False,
    check: Annotated[bool, typer.Option(
        "--check", help="Exit 1 when a judged row is outside its tolerance.")] = False,
) -> None:
    """Run the leaky profiles with no guard on the need-to-know suite and print the fitted vs
    paper table per profile, sink, free-text field, transition type and domain (--suite
    acquisition: per behaviour, domain and marker subset, and ΔC). Exit 0 unless --check finds a
    failing row; a failing row says why."""
    if suite == "acquisition":
        _acquisition(None if all_cases else cases, seed, as_json, check)
        return
    if suite != "need-to-know":
        raise fail(f"--suite: calibrate takes need-to-know or acquisition (got {suite!r})")
    from ..agents.leaky.calibrate import calibration, render_markdown, stratified
    from ..cases.need_to_know import generate

    ntk = generate(seed=0)
    chosen = list(ntk.cases) if all_cases else stratified(ntk.cases, cases or 230)
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


def _acquisition(cases: int | None, seed: int, as_json: bool, check: bool) -> None:
    from ..agents.acquisition.calibrate import acquisition_calibration, render_acquisition

    result = acquisition_calibration(limit=cases, seed=seed)
    failed = [r for r in result["rows"] if r.passed is False]
    if as_json:
        typer.echo(json.dumps({"suite": "acquisition", "cases": result["cases"], "seed": seed,
                               "agent": result["agent"],
                               "rows": [r.to_dict() for r in result["rows"]],
                               "failed": len(failed)}, indent=2, ensure_ascii=False))
    else:
        typer.echo(render_acquisition(result))
    raise typer.Exit(1 if check and failed else 0)
