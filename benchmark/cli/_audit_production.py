"""``tpguard audit --policy POLICY --spans SOURCE``: what enforce and redact would have done to the
traced calls of an audit-mode deployment (issue 34, item 2).

    tpguard audit --policy policy.yaml --spans spans.jsonl [--since 2026-12-01T00:00] [--until …]
                  [--json] [--markdown audit.md] [--html audit.html]

SOURCE is a spans.jsonl file or folder, an OTLP/JSON export, a Jaeger UI trace download or a
Phoenix span export (detected). The terminal shows the per-stage counts and the request stage's
breakdowns; ``--json`` prints everything (sessions, breakdowns, each call a stricter mode would
have changed); ``--markdown``/``--html`` write the report.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ._common import out_console

__all__ = ["parse_time", "production_audit"]


def parse_time(text: str | None, flag: str) -> datetime | None:
    """An ISO 8601 time (``2026-12-01``, ``2026-12-01T08:30``, with or without offset; UTC when
    none is given), or a clear error naming the flag."""
    if text is None:
        return None
    try:
        t = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{flag} {text!r}: expected an ISO 8601 time such as 2026-12-01T08:30 "
                         "(UTC unless an offset is given)") from None
    return t if t.tzinfo is not None else t.replace(tzinfo=timezone.utc)


def production_audit(policy: Path, spans: Path, *, since: str | None, until: str | None,
                     as_json: bool, markdown: Path | None, html: Path | None, err: Console) -> None:
    from tpguard import PolicyKB

    from ..audit import audit_calls, call_facts_of, read_source
    from ..audit.render import render_html, render_markdown

    start, end = parse_time(since, "--since"), parse_time(until, "--until")
    kb = PolicyKB.from_file(policy)
    source = read_source(spans)
    if source.skipped:
        err.print(f"note: not span exports, skipped: {escape(', '.join(source.skipped))}",
                  highlight=False, soft_wrap=True)
    result = audit_calls(kb, call_facts_of(source.spans), since=start, until=end)
    meta = {"policy": str(policy), "source": str(spans), "format": source.format,
            "since": start.isoformat() if start else None, "until": end.isoformat() if end else None}
    if markdown is not None:
        markdown.write_text(render_markdown(result, meta), encoding="utf-8")
    if html is not None:
        html.write_text(render_html(result, meta), encoding="utf-8")
    if not result.calls and not result.exits:
        err.print(f"[yellow]warning:[/] no guard spans in {escape(str(spans))}"
                  f"{' in the time range' if start or end else ''}", highlight=False, soft_wrap=True)
    if as_json:
        typer.echo(json.dumps({**meta, **result.to_dict()}, indent=2))
        return
    _print(result.to_dict(), meta)


def _print(d: dict[str, Any], meta: dict[str, Any]) -> None:
    out = out_console()
    out.print(f"{d['calls']} call(s), {d['exits']} exit(s), {d['session_count']} session(s) "
              f"from {escape(meta['source'])} ({meta['format']})", highlight=False)
    for stage, s in d["stages"].items():
        out.print(f"{stage}: enforce would act on {s['enforce']}, redact would rewrite "
                  f"{s['redact_rewrite']} and block {s['redact_block']}", highlight=False)
    for dim, rows in d["stages"]["request"]["by"].items():
        if not rows:
            continue
        table = Table(title=f"would-be blocks by {dim.replace('_', ' ')}")
        for col in (dim, "enforce", "redact rewrite", "redact block", "findings", "sessions"):
            table.add_column(col, justify="left" if col == dim else "right")
        for r in rows:
            table.add_row(escape(str(r[dim])), str(r["enforce"]), str(r["redact_rewrite"]),
                          str(r["redact_block"]), str(r["findings"]), escape(", ".join(r["sessions"])))
        out.print(table)
