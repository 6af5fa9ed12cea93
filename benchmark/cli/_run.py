"""``tpguard bench run`` — run agents on a suite with guards off and on, and write the report."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

__all__ = ["run"]

_SHOW = ("TaskSuccess", "FOR", "SWLR", "FreeTextFOR", "MT-POI", "SMTC")


def _split(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def run(
    suite: Annotated[str, typer.Option("--suite", help="need-to-know | public-derived")] = "need-to-know",
    agent: Annotated[str | None, typer.Option(
        "--agent", help="Comma-separated: oracle, leaky[:PROFILE], replay:PATH, langchain:MODEL, "
                        "smolagents:MODEL. Default (and --quick): oracle,leaky")] = None,
    guard: Annotated[str | None, typer.Option(
        "--guard", help="Comma-separated: off, audit, enforce, redact, langchain-pii, "
                        "presidio-redact, drop-free-text. Default: all but audit")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Run directory (resumable).")] = None,
    source: Annotated[Path | None, typer.Option("--source", help="Public data folder (public-derived).")] = None,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    quick: Annotated[bool, typer.Option("--quick", help="Two cases per domain.")] = False,
    limit: Annotated[int | None, typer.Option("--limit", help="At most N cases.")] = None,
    domains: Annotated[str | None, typer.Option("--domains", help="Comma-separated domains.")] = None,
    workers: Annotated[int, typer.Option("--workers", help="Parallel cases (API-bound agents).")] = 1,
    base_url: Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint.")] = None,
    code_agent: Annotated[bool, typer.Option("--code-agent", help="smolagents: CodeAgent.")] = False,
    otlp_endpoint: Annotated[str | None, typer.Option(
        "--otlp-endpoint", help="Also export spans over OTLP (e.g. http://localhost:4318).")] = None,
    guard_knows_variants: Annotated[bool, typer.Option(
        "--guard-knows-variants", help="Give tpguard the atoms' semantic variants too.")] = False,
    no_report: Annotated[bool, typer.Option("--no-report", help="Skip report.md/html.")] = False,
) -> None:
    """Run suite × agent × guard × case, score every case from the backends' audit log, and write
    run.json, records.jsonl, audit.sqlite, spans.jsonl, summary.json and the reports."""
    from ..cases.registry import SuiteError
    from ..guards import GUARD_NAMES
    from ..runner import QUICK_AGENTS, QUICK_GUARDS, RunConfig, run_benchmark

    con, err = Console(), Console(stderr=True)
    guards = _split(guard) or list(QUICK_GUARDS)
    bad = [g for g in guards if g not in GUARD_NAMES]
    if bad:
        err.print(f"[red]--guard[/]: unknown {', '.join(map(escape, bad))}; choose from "
                  f"{', '.join(GUARD_NAMES)}")
        raise typer.Exit(2)
    config = RunConfig(
        suite=suite, agents=_split(agent) or list(QUICK_AGENTS), guards=guards,
        out=out or Path("runs") / (f"{suite}-quick" if quick else suite), source=source, seed=seed,
        quick=quick, limit=limit, domains=_split(domains), workers=max(1, workers),
        base_url=base_url, api_key=os.environ.get("OPENAI_API_KEY") if base_url else None,
        code_agent=code_agent, otlp_endpoint=otlp_endpoint,
        guard_knows_variants=guard_knows_variants, reports=not no_report,
    )
    try:
        result = run_benchmark(config, progress=True)
    except (SuiteError, ValueError, FileNotFoundError) as e:
        err.print(f"[red]error:[/] {escape(str(e))}", highlight=False)
        raise typer.Exit(2) from None
    table = Table(title=f"{suite}: {result.executed} runs executed, {result.skipped} resumed")
    for col in ("agent", "guard", "n", *_SHOW):
        table.add_column(col, justify="right" if col not in ("agent", "guard") else "left")
    for row in result.summary["rows"]:
        cells = [f"{row[k]:.1f}" if isinstance(row.get(k), float) else "–" for k in _SHOW]
        table.add_row(row["agent"], row["guard"], str(row["n"]), *cells)
    con.print(table)
    con.print(f"run directory: {result.out}", highlight=False)
    for name, path in result.reports.items():
        con.print(f"  {name}: {path}", highlight=False)
