"""``tpguard bench check SUITE [--source DIR] [--seed N] [--min-forbidden N] [--json]``."""

from __future__ import annotations

import json
from collections import Counter
from typing import Annotated

import typer
from rich.console import Console

from ..cases._suite_cli import print_problems
from ._common import SeedOpt, SourceOpt, SuiteArg, load_or_exit, out_console, progress

__all__ = ["check"]


def check(
    suite: SuiteArg,
    source: SourceOpt = None,
    seed: SeedOpt = 0,
    min_forbidden: Annotated[int, typer.Option(
        "--min-forbidden", help="Forbidden atom–tool opportunities a case needs (default: 20 for "
        "public-derived as in the paper's filter, 1 otherwise).")] = -1,
    as_json: Annotated[bool, typer.Option("--json", help="JSON output.")] = False,
) -> None:
    """Validate every case (schema, disjoint labels, required facts authorized, detectable atoms,
    a feasible safe oracle path, forbidden opportunities). Exit 1 when any case fails."""
    from ..cases.acquisition.cli import check_command, is_acquisition
    from ..cases.schema import Suite
    from ..cases.validate import Problem, check_suite

    if is_acquisition(suite):  # its own case type and checks (seed 001_*)
        check_command(seed, as_json)  # raises typer.Exit
    from ..cases.exposure.cli import is_exposure

    if is_exposure(suite):  # its own session type and checks (seed 002_*)
        from ..cases.exposure.cli import check_command as exp_check

        exp_check(seed, source, as_json)  # raises typer.Exit

    out, err = out_console(), Console(stderr=True)
    loaded = load_or_exit(suite, source, seed, err)
    threshold = min_forbidden if min_forbidden >= 0 else (20 if loaded.name == "public-derived" else 1)
    problems = []
    with progress("bench check") as bar:  # one case at a time, so the bar can move
        for case in bar.track(loaded.cases, description="cases"):
            problems.extend(check_suite(Suite(name=loaded.name, cases=(case,)),
                                        min_forbidden=threshold))
    ids = Counter(c.id for c in loaded.cases)
    problems.extend(Problem(i, "schema", "duplicate case id in the suite")
                    for i, n in sorted(ids.items()) if n > 1)
    failed = sorted({p.case_id for p in problems})
    if as_json:
        typer.echo(json.dumps({"suite": loaded.name, "cases": len(loaded), "failed_cases": len(failed),
                               "min_forbidden": threshold,
                               "problems": [p.to_dict() for p in problems]}, indent=2, ensure_ascii=False))
    else:
        print_problems(out, problems, len(loaded), len(failed))
    raise typer.Exit(1 if failed else 0)
