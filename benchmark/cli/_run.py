"""``tpguard bench run`` — run agents on a suite with guards off and on, and write the report.

Exit codes (``docs/running.md``): 0 every case-run scored; 1 some case-runs errored (results
written, errors counted per row); 2 bad options or inputs, a directory of another configuration,
a directory in use; 3 an agent cannot start (missing key, missing file, unreachable endpoint).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ._common import fail, out_console

# Pure flags carry metavar="": typer would otherwise print "--quick <bool>" in the help.

__all__ = ["run"]

_SHOW = ("TaskSuccess", "FOR", "SWLR", "FreeTextFOR", "MT-POI", "SMTC")
_ACQ_SHOW = ("TCR", "CER", "HCER", "OLR", "PLR", "HPLR")  # acquisition rows (seed 001)
_EXP_SHOW = ("ECR", "OLF", "TCR")  # exposure rows (seed 002), then coverage.<channel>
_EXP_GUARDS = ("off", "exit:email", "exits", "enforce", "redact", "return-min")
_ROW_KEYS = ("agent", "guard", "suite", "n", "n_total", "errors", "error_rate", "error_types",
             "Task", "Workflow", "GoldArg", "TaskSuccess", "FOR", "SWLR", "ToolFOR", "LTCR",
             "FreeTextFOR", "FTSlotRate", "MidFOR", "MT-POI", "SMTC")
_ACQ_ROW_KEYS = ("agent", "guard", "suite", "family", "n", "n_total", "errors", "error_rate",
                 "error_types", *_ACQ_SHOW, "DeltaC", "DeltaP", "CERPositiveProbe", "ci")
_EXP_ROW_KEYS = ("agent", "guard", "suite", "family", "n", "n_total", "errors", "error_rate",
                 "error_types", *_EXP_SHOW, "OLF_positive", "channels", "ci")


def _json_row(r: dict[str, Any]) -> dict[str, Any]:
    if r.get("family") == "exposure":
        cov = {k: v for k, v in r.items() if k.startswith("coverage.")}
        return {**{k: r.get(k) for k in _EXP_ROW_KEYS}, **cov}
    return {k: r.get(k) for k in (_ACQ_ROW_KEYS if r.get("family") == "acquisition" else _ROW_KEYS)}


def _split(option: str, value: str | None, default: tuple[str, ...]) -> list[str]:
    """A comma-separated option; ``None`` (not given) is the default, an empty list an error."""
    if value is None:
        return list(default)
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items:
        raise fail(f"{option}: empty list; give at least one name")
    return items




def run(
    suite: Annotated[str, typer.Option("--suite", help="need-to-know | public-derived | acquisition | exposure")] = "need-to-know",
    agent: Annotated[str | None, typer.Option(
        "--agent", help="Comma-separated: oracle, leaky[:PROFILE], replay:PATH, "
                        "langchain[+PATH]:MODEL, smolagents[+PATH]:MODEL. Default (and --quick): "
                        "oracle,leaky")] = None,
    guard: Annotated[str | None, typer.Option(
        "--guard", help="Comma-separated: off, audit, enforce, redact, langchain-pii, "
                        "presidio-redact, drop-free-text. Default: all but audit. Suite "
                        "acquisition: off, audit, enforce, redact, presidio-redact, directive "
                        "(default: all). Suite exposure: off, exit:CHANNEL[+CHANNEL…] (e.g. "
                        "exit:email), exits, enforce, redact, return-min (default: all, with "
                        "exit:email); oracle-exits / oracle-exit:CHANNEL: the paper's ORACLE "
                        "sanity check (seed 002 App. K: handed the hidden targets), not a "
                        "guard")] = None,
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Run directory (resumable). Default: runs/ plus a name derived from "
                            "the configuration, e.g. runs/need-to-know-quick.")] = None,
    source: Annotated[Path | None, typer.Option("--source", help="Public data folder (public-derived; exposure: agentdojo/ and workbench/).")] = None,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    quick: Annotated[bool, typer.Option("--quick", help="Two cases per domain.", metavar="")] = False,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="At most N cases.")] = None,
    domains: Annotated[str | None, typer.Option(
        "--domains", help="Comma-separated domain slugs or names, e.g. medical,it-helpdesk.")] = None,
    workers: Annotated[int, typer.Option(
        "--workers", min=1, help="Case-runs in N worker processes (1: in this process; "
                                 "docs/running.md, Workers).")] = 1,
    executor: Annotated[str, typer.Option(
        "--executor", help="local (this machine, --workers) or ray (every case-run a "
                           "Ray task; needs the 'ray' extra; docs/distributed.md).")] = "local",
    ray_address: Annotated[str | None, typer.Option(
        "--ray-address", help="--executor ray: the cluster to join (else RAY_ADDRESS, else a local "
                              "Ray instance started for this run).")] = None,
    ray_num_cpus: Annotated[int | None, typer.Option(
        "--ray-num-cpus", help="--executor ray without a cluster: CPUs of the local instance "
                               "(default: the machine's).")] = None,
    max_concurrency: Annotated[int | None, typer.Option(
        "--max-concurrency", help="--executor ray: case-runs in flight per agent (default: the "
                                  "cluster's CPUs), so a rate-limited API is not flooded.")] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint.")] = None,
    code_agent: Annotated[bool, typer.Option("--code-agent", help="smolagents: CodeAgent.", metavar="")] = False,
    llama_server: Annotated[str | None, typer.Option(
        "--llama-server", help="local:MODEL agents: a llama.cpp llama-server on loopback serving "
                               "that model file (http://127.0.0.1:PORT), instead of llama.cpp in "
                               "this process; with --workers N its slots batch the case-runs "
                               "(docs/real-models.md, Faster runs).")] = None,
    guard_path: Annotated[str, typer.Option(
        "--guard-path", help="Framework agents: where tpguard's modes decide — adapter (default, as "
                             "deployed: the decorator), decorator, middleware (langchain), "
                             "instrumentor (smolagents, audit only), gateway, or mcp (every agent: the "
                             "case's tools served over MCP behind tpguard's MCP proxy). "
                             "Per agent: langchain+middleware:MODEL.")] = "adapter",
    otlp_endpoint: Annotated[str | None, typer.Option(
        "--otlp-endpoint", help="Also export spans over OTLP (e.g. http://localhost:4318).")] = None,
    presidio_model: Annotated[str | None, typer.Option(
        "--presidio-model", help="presidio-redact: an INSTALLED spaCy pipeline for NER (e.g. "
                                 "en_core_web_sm; never downloaded). Default: the first installed "
                                 "en_core_web_sm/md/lg, else pattern recognizers only; 'none' "
                                 "forces patterns only.")] = None,
    task_reading: Annotated[str, typer.Option(
        "--task-reading", help="Task (S_task): binary — the end state is reached or not, as the "
                               "paper reads it (default) — or fraction of end-state checks.")
    ] = "binary",
    bootstrap: Annotated[int, typer.Option(
        "--bootstrap", min=0, help="Bootstrap resamples for every interval of the summary "
                                   "(0: none). Default 10,000, as seed 002.")] = 10_000,
    stats_seed: Annotated[int, typer.Option(
        "--stats-seed", help="Seed of the bootstrap and the sign-flip tests. Default 2027, as "
                             "seed 002.")] = 2027,
    guard_knows_variants: Annotated[bool, typer.Option(
        "--oracle-variants", "--guard-knows-variants",
        help="ORACLE condition: hand tpguard the evaluator's semantic variants (part of the answer "
             "key, which no deployment has). The terminal, run.json and every report say so.",
        metavar="")] = False,
    retry_errors: Annotated[bool, typer.Option(
        "--retry-errors/--no-retry-errors", help="On resume, run errored case-runs again.")] = True,
    force: Annotated[bool, typer.Option("--force", help="Run every case-run again.", metavar="")] = False,
    append: Annotated[bool, typer.Option(
        "--append", help="Add this configuration to a directory holding another one.", metavar="")] = False,
    no_report: Annotated[bool, typer.Option("--no-report", help="Skip report.md/html.", metavar="")] = False,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print the summary rows as JSON instead of the table.", metavar="")] = False,
) -> None:
    """Run suite × agent × guard × case, score every case from the backends' audit log, and write
    run.json, records.jsonl, audit.sqlite, spans.jsonl, summary.json and the reports.
    Exit 0: all scored; 1: some case-runs errored; 2: bad options or inputs; 3: an agent cannot
    start."""
    from .._extras import MissingExtra, require_extra
    from ..cases.registry import SuiteError
    from ..guards.acquisition import ACQ_GUARD_NAMES
    from ..report._audit_row import print_audit_rows
    from ..runner import QUICK_AGENTS, QUICK_GUARDS, RunConfig, RunError, run_benchmark
    from ..runner.config import ORACLE_VARIANTS

    if otlp_endpoint:
        try:
            require_extra("opentelemetry.exporter.otlp.proto.http", "otlp", what="--otlp-endpoint")
        except MissingExtra as e:
            raise fail(str(e)) from None
    if executor == "ray":
        try:
            require_extra("ray", "ray", what="--executor ray")
        except MissingExtra as e:
            raise fail(str(e)) from None
    config = RunConfig(
        suite=suite, agents=_split("--agent", agent, QUICK_AGENTS),
        guards=_split("--guard", guard, {"acquisition": ACQ_GUARD_NAMES,
                                         "exposure": _EXP_GUARDS}.get(suite, QUICK_GUARDS)),
        out=out, source=source, seed=seed,
        quick=quick, limit=limit, domains=_split("--domains", domains, ()), workers=workers,
        executor=executor, ray_address=ray_address, ray_num_cpus=ray_num_cpus,
        max_concurrency=max_concurrency,
        base_url=base_url, api_key=os.environ.get("OPENAI_API_KEY") if base_url else None,
        code_agent=code_agent, llama_server=llama_server, guard_path=guard_path,
        otlp_endpoint=otlp_endpoint,
        guard_knows_variants=guard_knows_variants, presidio_model=presidio_model,
        task_reading=task_reading, bootstrap=bootstrap, stats_seed=stats_seed,
        reports=not no_report,
        retry_errors=retry_errors, force=force, append=append,
    )
    try:
        result = run_benchmark(config, progress=not as_json)
    except RunError as e:
        raise fail(str(e), e.code) from None
    except (SuiteError, ValueError, FileNotFoundError) as e:
        raise fail(str(e)) from None
    rows = result.summary["rows"]
    _print_errors(rows)
    if as_json:
        typer.echo(json.dumps([_json_row(r) for r in rows], indent=1))
    else:
        _print_table(rows, suite, result.executed, result.skipped, result.retried)
        con = out_console()
        if guard_knows_variants:
            con.print(f"[bold yellow]{ORACLE_VARIANTS}[/]", highlight=False, soft_wrap=True)
        print_audit_rows(result.summary, con)  # audit guards: flags against the evaluator's
        con.print(f"run directory: {result.out}", highlight=False, soft_wrap=True)
        for name, path in result.reports.items():
            con.print(f"  {name}: {path}", highlight=False, soft_wrap=True)
    raise typer.Exit(1 if result.errors else 0)


def _print_errors(rows: list[dict[str, Any]]) -> None:
    """One red line per (agent, guard) with errored case-runs, on stderr, before anything else."""
    err = Console(stderr=True)
    for r in rows:
        if r.get("errors"):
            types = ", ".join(f"{t} ×{n}" for t, n in (r.get("error_types") or {}).items())
            err.print(f"[red]errors:[/] {escape(r['agent'])} / {escape(r['guard'])}: "
                      f"{r['errors']} of {r['n_total']} case-runs errored — {escape(types)} "
                      "(not scored; see records.jsonl)", highlight=False, soft_wrap=True)


def _print_table(rows: list[dict[str, Any]], suite: str, executed: int, skipped: int,
                 retried: int) -> None:
    again = f" ({retried} errored before, run again)" if retried else ""
    table = Table(title=f"{suite}: {executed} runs executed{again}, {skipped} resumed")
    show: tuple[str, ...] = _SHOW
    if rows and all(r.get("family") == "acquisition" for r in rows):
        show = _ACQ_SHOW
    elif rows and all(r.get("family") == "exposure" for r in rows):
        channels = dict.fromkeys(c for r in rows for c in (r.get("channels") or ()))
        show = (*_EXP_SHOW, *(f"coverage.{c}" for c in channels))
    for col in ("agent", "guard", "n", "errors", *show):
        table.add_column(col, justify="right" if col not in ("agent", "guard") else "left")
    for row in rows:
        cells = [f"{row[k]:.1f}" if isinstance(row.get(k), float) else "–" for k in show]
        errors = f"[red]{row['errors']}[/]" if row.get("errors") else "0"
        table.add_row(escape(row["agent"]), escape(row["guard"]), str(row["n"]), errors, *cells)
    out_console().print(table)
