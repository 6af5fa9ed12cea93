"""``tpguard audit --run RUN_DIR`` — re-score an acquisition or exposure run from what it stored
(``audit.sqlite``'s observations) and compare with its recorded scores. Exit 0: every case-run
agrees; 1: some differ or lack stored observations; 2: not a re-scorable run."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ._common import out_console

__all__ = ["audit_run"]


def audit_run(run_dir: Path, as_json: bool) -> None:
    from ..audit.rescore import RescoreError, rescore_run

    err = Console(stderr=True)
    try:
        result = rescore_run(run_dir)
    except (OSError, RescoreError) as e:
        err.print(f"[red]error:[/] {escape(str(e))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    if as_json:
        typer.echo(json.dumps({**asdict(result), "agree": result.agree}, indent=2))
    else:
        keys = [k for k in (result.rows[0] if result.rows else {}) if "." in k]
        table = Table(title=f"tpguard audit --run: {result.suite} re-scored from audit.sqlite "
                            "(percent, recorded → re-scored)")
        for col in ("agent", "guard", "n", "agree", *keys):
            table.add_column(col, justify="left" if col in ("agent", "guard") else "right")
        for r in result.rows:
            table.add_row(r["agent"], r["guard"], str(r["n"]), str(r["agree"]),
                          *("" if r[k] is None else f"{r[k]:.1f}" for k in keys))
        out_console().print(table)
        for r in result.rows:
            if r["differ"]:
                err.print(f"{escape(r['agent'])} / {escape(r['guard'])}: {len(r['differ'])} "
                          f"case-run(s) differ, e.g. {escape(', '.join(r['differ'][:5]))}",
                          highlight=False, soft_wrap=True)
        if result.missing:
            err.print(f"[yellow]warning:[/] {result.missing} measured case-run(s) have no stored "
                      "observations (a run made before observations were kept)")
    if not result.agree:
        raise typer.Exit(1)
