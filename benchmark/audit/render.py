"""The production audit as markdown and as one self-contained HTML page (issue 34, item 2).

Both are built from the same :class:`~tpguard.benchmark.report._tables.Table` values the
benchmark's report prints (``md_table`` / ``html_table``: every cell escaped), so the page opens
offline and shows atom ids, types, fields and counts — never a value.
"""

from __future__ import annotations

import html
from typing import Any

from ..report._html import html_table
from ..report._markdown import md_table
from ..report._overview import inline_html
from ..report._tables import Table
from .production import DIMENSIONS, ProductionAudit

__all__ = ["audit_tables", "render_html", "render_markdown"]

_STAGES = (("request", "Tool calls: what enforce would have blocked, redact rewritten"),
           ("result", "Tool results: what would have been withheld (enforce) or filtered (redact)"),
           ("exit", "Exits: what would have been withheld (enforce) or redacted (redact)"))
_CSS = """body{font-family:system-ui,sans-serif;margin:24px auto;max-width:1280px;color:#222;
padding:0 16px} h2{margin-top:32px;border-bottom:1px solid #ddd} h3{font-size:15px}
table.data{border-collapse:collapse;font-size:13px;margin:8px 0}
table.data th,table.data td{border:1px solid #ddd;padding:3px 7px;text-align:right}
table.data th{background:#f4f4f4} table.data td:first-child{text-align:left}
.note{color:#555;font-size:13px} code{background:#f4f4f4;padding:0 3px}"""


def _facts(audit: ProductionAudit, meta: dict[str, Any]) -> list[str]:
    d = audit.to_dict()
    lines = [f"Policy `{meta.get('policy', '?')}`; spans from `{meta.get('source', '?')}` "
             f"({meta.get('format', '?')}){_range(meta)}.",
             f"{d['calls']} tool call(s) and {d['exits']} exit(s) in {d['session_count']} "
             f"session(s); recorded in mode(s) {', '.join(f'`{m}` ×{n}' for m, n in d['recorded_modes'].items()) or '—'}."]
    for stage, _ in _STAGES:
        s = d["stages"][stage]
        lines.append(f"{stage}: enforce would have acted on {s['enforce']}, redact would have "
                     f"rewritten {s['redact_rewrite']} and blocked {s['redact_block']}.")
    if d["changed_by_policy"]:
        lines.append(f"{d['changed_by_policy']} finding(s) are decided otherwise by this policy than "
                     "by the guard that recorded them (the policy changed since).")
    if d["unknown_tools"]:
        lines.append("Tools not in the policy (decided by type rules, default deny): "
                     + ", ".join(f"`{t}` ×{n}" for t, n in d["unknown_tools"].items()) + ".")
    return lines


def _range(meta: dict[str, Any]) -> str:
    since, until = meta.get("since"), meta.get("until")
    return f", from {since or 'the start'} to {until or 'the end'}" if since or until else ""


def audit_tables(audit: ProductionAudit) -> dict[str, list[Table]]:
    """Per stage: the sessions table (request stage only) and one table per dimension."""
    out: dict[str, list[Table]] = {}
    for stage, _ in _STAGES:
        by = audit.breakdown(stage)
        tables = []
        if stage == "request":
            sessions = audit.to_dict()["sessions"]
            tables.append(Table("audit_sessions", "Sessions", [
                "session", "calls", "would block", "would withhold", "start", "end"],
                [[s["session"], s["calls"], s["would_block"], s["would_withhold"], s["start"] or "",
                  s["end"] or ""] for s in sessions]))
        for dim in DIMENSIONS:
            rows = [[r[dim], r["enforce"], r["redact_rewrite"], r["redact_block"], r["findings"],
                     len(r["sessions"]), ", ".join(r["sessions"][:5])
                     + (" …" if len(r["sessions"]) > 5 else "")] for r in by[dim]]
            if rows:
                tables.append(Table(f"audit_{stage}_{dim}", f"By {dim.replace('_', ' ')}", [
                    dim, "enforce", "redact rewrite", "redact block", "findings", "sessions",
                    "in sessions"], rows))
        out[stage] = tables
    return out


def _calls(audit: ProductionAudit) -> Table:
    return Table("audit_interventions", "Every call a stricter mode would have changed", [
        "time", "session", "stage", "tool", "enforce", "redact", "atom types", "fields", "atom ids"],
        [[d["time"] or "", d["session"], d["stage"], d["tool"], d["enforce"], d["redact"],
          ", ".join(d["atom_types"]), ", ".join(d["fields"]), ", ".join(d["atom_ids"])]
         for d in (i.to_dict() for i in audit.interventions)])


def render_markdown(audit: ProductionAudit, meta: dict[str, Any]) -> str:
    parts = ["# tpguard audit: what a stricter mode would have done", "",
             *(f"- {line}" for line in _facts(audit, meta)), ""]
    for (_stage, title), tables in zip(_STAGES, audit_tables(audit).values(), strict=True):
        parts += [f"## {title}", ""]
        if not any(t.rows for t in tables if t.name != "audit_sessions"):
            parts += ["_Nothing would have changed._", ""]
        for t in tables:
            parts += [f"### {t.title}", "", md_table(t), ""]
    parts += ["## Calls", "", md_table(_calls(audit)), ""]
    return "\n".join(parts)


def render_html(audit: ProductionAudit, meta: dict[str, Any]) -> str:
    body = ["<h1>tpguard audit: what a stricter mode would have done</h1>",
            "<ul>" + "".join(f"<li>{inline_html(x)}</li>" for x in _facts(audit, meta)) + "</ul>"]
    for (_stage, title), tables in zip(_STAGES, audit_tables(audit).values(), strict=True):
        body.append(f"<h2>{html.escape(title)}</h2>")
        if not any(t.rows for t in tables if t.name != "audit_sessions"):
            body.append("<p class='note'>Nothing would have changed.</p>")
        body += [f"<h3>{html.escape(t.title)}</h3>{html_table(t)}" for t in tables]
    body += ["<h2>Calls</h2>", html_table(_calls(audit))]
    return ("<!doctype html><html><head><meta charset='utf-8'><title>tpguard audit</title>"
            f"<style>{_CSS}</style></head><body>{''.join(body)}</body></html>")
