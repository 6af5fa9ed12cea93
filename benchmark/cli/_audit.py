"""``tpguard audit`` — score one agent's recorded behaviour against a case or policy, audit-only.

    tpguard audit --case CASE.json --trajectory CALLS.jsonl [--json]
    tpguard audit --case CASE.json --spans spans.jsonl|DIR [--json]
    tpguard audit --run RUN_DIR [--json]      # re-score an acquisition / exposure run (_audit_run)
    tpguard audit --policy POLICY.yaml --spans SOURCE [--since T] [--until T] [--json]
                  [--markdown FILE] [--html FILE]

``--policy`` is the production audit (``_audit_production.py``): what enforce and redact would
have done to a deployment's traced calls, by session, tool, sink, purpose, atom type and field.
SOURCE (for ``--case`` too) is a spans.jsonl file or folder, an OTLP/JSON export, a Jaeger UI
trace download or a Phoenix span export, detected by content.

The trajectory holds what the tools received; spans hold findings (no values needed). Utility is
scored when the case carries an answer key (a benchmark case), privacy always. A bad line is
reported as ``file:line``; calls to tools the case does not have are flagged (``unknown_tools``:
they are scored with every atom forbidden there, default deny); the case ids a file names are
listed (and required to include the case when there are several).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ._common import out_console, progress, require_bench_extra

__all__ = ["audit"]

_UTILITY = ("Task", "Workflow", "GoldArg", "TaskSuccess", "SMTC")


def audit(
    case: Annotated[Path | None, typer.Option("--case", help="Case JSON/JSONL, or a policy file.")] = None,
    trajectory: Annotated[Path | None, typer.Option(
        "--trajectory", help="JSON/JSONL of tool calls {tool, arguments}.")] = None,
    spans: Annotated[Path | None, typer.Option(
        "--spans", help="Exported spans: spans.jsonl (file or folder), OTLP/JSON, a Jaeger UI "
        "download or a Phoenix span export.")] = None,
    case_id: Annotated[str | None, typer.Option("--case-id", help="Case to pick from a suite file.")] = None,
    s_task: Annotated[float | None, typer.Option(
        "--s-task", help="End-state score if known (0–1); spans from a run carry it.")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    run_dir: Annotated[Path | None, typer.Option(
        "--run", help="Re-score an acquisition or exposure run directory from its audit.sqlite "
                      "and compare with its recorded scores.")] = None,
    policy: Annotated[Path | None, typer.Option(
        "--policy", help="Production audit: what enforce/redact would have done under this policy.")] = None,
    since: Annotated[str | None, typer.Option("--since", help="With --policy: calls from (ISO 8601).")] = None,
    until: Annotated[str | None, typer.Option("--until", help="With --policy: calls until (ISO 8601).")] = None,
    markdown: Annotated[Path | None, typer.Option("--markdown", help="With --policy: write a markdown report.")] = None,
    html: Annotated[Path | None, typer.Option("--html", help="With --policy: write an HTML report.")] = None,
) -> None:
    """Score a recorded trajectory or exported spans against one case, or audit a deployment's
    spans against its policy (--policy): what enforce and redact would have done."""
    require_bench_extra("tpguard audit")
    if run_dir is not None:  # issue 29: the run's own evidence (benchmark/cli/_audit_run.py)
        from ._audit_run import audit_run

        return audit_run(run_dir, as_json)
    if policy is not None or case is None:
        _production(policy, spans, case, trajectory, since, until, as_json, markdown, html)
        return
    from ..audit import case_from_file, case_ids_in, read_spans, read_trajectory, trace_runs
    from ..metrics import CaseScorer

    err = Console(stderr=True)
    if (trajectory is None) == (spans is None):
        err.print("[red]error:[/] give exactly one of --trajectory FILE or --spans FILE|DIR")
        raise typer.Exit(2)
    present: list[str] = []
    try:
        the_case, has_key = case_from_file(case, case_id)
        scorer = CaseScorer(the_case)
        known = {t.name for t in the_case.tools}
        rows: list[dict[str, Any]] = []
        if trajectory is not None:
            present = case_ids_in(trajectory)
            traj = read_trajectory(trajectory, _pick(the_case.id, case_id, present, trajectory))
            score = scorer.score(traj, 1.0 if s_task is None else s_task)
            rows.append(_row(score.values(), the_case.id, "", "", len(traj.calls), 0,
                             has_key and s_task is not None,
                             Counter(c.tool for c in traj.calls if c.tool not in known)))
        else:
            runs = list(trace_runs(read_spans(spans)))  # type: ignore[arg-type]
            present = sorted({r.case_id for r in runs if r.case_id})
            with progress("audit spans") as bar:
                for run in bar.track(runs, description="traces"):
                    if run.case_id not in (None, the_case.id):
                        continue
                    s_known = s_task if s_task is not None else run.s_task
                    score = scorer.score_findings(run.calls, 1.0 if s_known is None else s_known)
                    rows.append(_row(score.values(), the_case.id, run.agent, run.guard,
                                     len(run.calls), run.blocked, has_key and s_known is not None,
                                     Counter(c.tool for c in run.calls if c.tool not in known)))
    except (OSError, ValueError) as e:
        err.print(f"[red]error:[/] {escape(_safe(e))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    if not rows:
        ids = f"; case ids present: {', '.join(present)}" if present else ""
        err.print(f"[red]error:[/] no calls for case {escape(the_case.id)} in the given file"
                  f"{escape(ids)}", highlight=False, soft_wrap=True)
        raise typer.Exit(1)
    _flag_unknown(rows, the_case.id, err)
    if as_json:
        typer.echo(json.dumps(rows if len(rows) > 1 else rows[0], indent=2))
        return
    if present:
        err.print(f"case ids in the file: {escape(', '.join(present))}", highlight=False,
                  soft_wrap=True)
    _print(rows)


def _production(policy: Path | None, spans: Path | None, case: Path | None,
                trajectory: Path | None, since: str | None, until: str | None, as_json: bool,
                markdown: Path | None, html: Path | None) -> None:
    from ._audit_production import production_audit

    err = Console(stderr=True)
    if policy is None or spans is None or case is not None or trajectory is not None:
        err.print("[red]error:[/] give --case CASE with --trajectory or --spans, --policy POLICY "
                  "with --spans SOURCE, or --run RUN_DIR")
        raise typer.Exit(2)
    try:
        production_audit(policy, spans, since=since, until=until, as_json=as_json,
                         markdown=markdown, html=html, err=err)
    except (OSError, ValueError) as e:
        err.print(f"[red]error:[/] {escape(_safe(e))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None


def _pick(case: str, given: str | None, present: list[str], path: Path) -> str | None:
    """Which case's calls to read from a trajectory file that names ``present`` case ids."""
    if given or case in present:
        return case
    if len(present) > 1:
        raise ValueError(f"{path} holds case ids {', '.join(present)}, not {case!r}; pick one "
                         "with --case-id and a case file that has it")
    return None


def _flag_unknown(rows: list[dict[str, Any]], case_id: str, err: Console) -> None:
    for r in rows:
        if r["unknown_tools"]:
            names = ", ".join(f"{t} ×{n}" for t, n in r["unknown_tools"].items())
            who = f"{r['agent']} / {r['guard']}: " if r["agent"] else ""
            err.print(f"[yellow]warning:[/] {escape(who)}{sum(r['unknown_tools'].values())} "
                      f"call(s) to tools not in case {escape(case_id)} ({escape(names)}); scored "
                      "with every atom forbidden there", highlight=False, soft_wrap=True)


def _safe(e: Exception) -> str:
    errors = getattr(e, "errors", None)
    if callable(errors):  # pydantic: locations and messages only, never the input values
        return "; ".join(f"{'.'.join(map(str, x['loc']))}: {x['msg']}"
                         for x in errors(include_input=False))[:500]
    return str(e)


def _row(values: dict[str, Any], case_id: str, agent: str, guard: str, calls: int, blocked: int,
         utility: bool, unknown: Counter[str]) -> dict[str, Any]:
    row: dict[str, Any] = {"case_id": case_id, "agent": agent, "guard": guard, "calls": calls,
                           "blocked": blocked, "unknown_tools": dict(unknown.most_common())}
    from ..metrics import KEYS  # the run summary's metric keys; imported once a command runs

    for k in KEYS:
        row[k] = values.get(k) if (utility or k not in _UTILITY) else None
    return row


def _print(rows: list[dict[str, Any]]) -> None:
    from ..metrics import KEYS

    table = Table(title="tpguard audit (percent; MT-POI and SMTC 0–100)")
    for col in ("agent", "guard", "calls", "blocked", *KEYS):
        table.add_column(col, justify="left" if col in ("agent", "guard") else "right")
    for r in rows:
        table.add_row(r["agent"] or "-", r["guard"] or "-", str(r["calls"]), str(r["blocked"]),
                      *("–" if r[k] is None else f"{r[k]:.1f}" for k in KEYS))
    out_console().print(table)
