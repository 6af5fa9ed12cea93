"""``report.html``: one self-contained page (plotly.js inlined once, no CDN, opens offline), in
the markdown report's order: summary, errors, run, caveats, split tables, figures.

Every string that reaches the page is HTML-escaped (tables here; prose through
:func:`._overview.inline_html`, which renders its backticks as ``<code>``; plotly escapes its own
JSON; the audit view renders with ``textContent``). The page shows atom ids and types, never values.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import plotly.io as pio

from ..cases.schema import Case
from ._acquisition import acquisition_html
from ._audit import audit_html
from ._audit_row import audit_row_html
from ._collect import ReportTables, reference_configs
from ._crosstab import Config, CrossTab
from ._exposure import exposure_html
from ._layout import COMPARISON_GROUPS, by_agent, html_table, split
from ._load import RunData
from ._markdown import caveats, run_facts
from ._overview import error_table, inline_html, no_loss_text, overview
from ._plots import figures, scatter_fig, scatter_points
from ._refs import ref
from ._tables import MAIN_GROUPS, Table
from ._tradeoff import chart_axes

__all__ = ["html_table", "render_html"]

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:24px auto;max-width:1280px;
color:#222;padding:0 16px}
h1{margin-bottom:4px} h2{margin-top:36px;border-bottom:1px solid #ddd;padding-bottom:4px}
table.data{border-collapse:collapse;font-size:13px;margin:8px 0;display:block;max-width:100%;
overflow-x:auto} h3{font-size:15px;margin:14px 0 2px} code{background:#f4f4f4;padding:0 3px}
table.data th,table.data td{border:1px solid #ddd;padding:3px 7px;text-align:right}
table.data th{background:#f4f4f4;position:sticky;top:0}
table.data td:first-child,table.data td:nth-child(2){text-align:left}
tr.bad td{background:#fde8e8}
.note{color:#555;font-size:13px} .controls label{margin-right:14px}
details{margin:6px 0} summary{cursor:pointer}
"""


def _section(title: str, *body: str) -> str:
    return f"<h2>{inline_html(title)}</h2>\n" + "\n".join(body)


def _note(text: str) -> str:
    return f"<p class='note'>{inline_html(text)}</p>" if text else ""


def _pieces(pieces: Sequence[Table], sub: bool = True) -> str:
    """The parts of a split table, each under a small heading when there are several."""
    if len(pieces) == 1:
        return html_table(pieces[0])
    return "\n".join(f"<h3>{inline_html(p.title)}</h3>{html_table(p)}" if sub else html_table(p)
                     for p in pieces)


def _list(items: Sequence[str]) -> str:
    return "<ul>" + "".join(f"<li>{inline_html(i)}</li>" for i in items) + "</ul>"


def _scatter_table(data: RunData) -> str:
    pts = scatter_points(data)
    axes = chart_axes(data)
    y = "100 − MT-POI" if axes.privacy else axes.y
    t = Table("scatter", "", ["Agent × guard", axes.x, f"{axes.x} lo", f"{axes.x} hi", y, "lo",
                              "hi"],
              [[p["label"], p["x"], p["x_lo"], p["x_hi"], p["y"], p["y_lo"], p["y_hi"]]
               for p in pts])
    return f"<details><summary>Scatter data</summary>{html_table(t)}</details>"


def _chart(data: RunData) -> str:
    """The privacy–utility chart every report opens with (plotly.js inlined here, once)."""
    axes = chart_axes(data)
    if not scatter_points(data):
        return _section(axes.title, _note("No row of this run has both measures."))
    div = pio.to_html(scatter_fig(data), full_html=False, include_plotlyjs=True,
                      config={"displaylogo": False, "responsive": True},
                      div_id="tradeoff-chart")
    return _section(axes.title, _note(axes.reading), div, _scatter_table(data))


def _opening(data: RunData, t: ReportTables) -> list[str]:
    summary = overview(data, t.loss_text)
    parts = [_section("Summary", f"<p>{inline_html(summary[0])}</p>", _list(summary[1:-1]),
                      f"<p>{inline_html(summary[-1])}</p>"), _chart(data)]
    errors = error_table(data)
    if errors is not None:
        parts.append(_section(errors.title, html_table(errors), _note(errors.note)))
    parts.append(_section("Run", "<ul>" + "".join(
        f"<li><b>{html.escape(k)}</b>: {html.escape(v)}</li>" for k, v in run_facts(data))
        + "</ul>"))
    parts.append(_section("How to read this report", _list(caveats(data))))
    return parts


def render_html(data: RunData, t: ReportTables, tabs: dict[Config, CrossTab],
                cases: dict[tuple[str, str], Case]) -> str:
    parts = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
             "<title>tpguard benchmark report</title>", f"<style>{_CSS}</style></head><body>",
             "<h1>tpguard benchmark report</h1>", *_opening(data, t)]
    if acq := acquisition_html(data.summary):  # PrivacyPeek rows, when the run has them
        parts.append(acq)
    if exp := exposure_html(data.summary):  # ASLEval rows, when the run has them
        parts.append(exp)
    if aud := audit_row_html(data.summary, html_table):  # audit guards' flags vs the evaluator
        parts.append(aud)
    if data.legacy:  # an acquisition-only run has no ToolPrivacyBench sections
        parts += _legacy(data, t, tabs, cases)
    parts.append("</body></html>")
    return "\n".join(parts)


def _legacy(data: RunData, t: ReportTables, tabs: dict[Config, CrossTab],
            cases: dict[tuple[str, str], Case]) -> list[str]:
    parts: list[str] = []
    for m in t.main:
        parts.append(_section(m.title, _pieces(split(m, MAIN_GROUPS)), _note(m.note)))
    parts.append(_section(t.comparison.title, _pieces(split(t.comparison, COMPARISON_GROUPS)),
                          _note(t.comparison.note)))
    losses = t.loss_text or [f"In this run {no_loss_text(data)}"]
    parts.append(_section("Where tpguard loses", _list(losses)))
    need_js = not scatter_points(data)  # else plotly.js came with the opening chart
    for title, fig in figures(data, t, tabs):
        if fig is None:
            parts.append(_section(title, _note("No data in this run.")))
            continue
        div = pio.to_html(fig, full_html=False, include_plotlyjs=need_js,
                          config={"displaylogo": False, "responsive": True})
        need_js = False
        parts.append(_section(title, div))
    parts.append(_section(t.transitions.title, _note(t.transitions.note), html_table(t.paths),
                          _details(data, t.transitions)))
    parts.append(_section(f"FOR by domain — {ref('Table 10a')}",
                          _pieces(by_agent(t.domain_pivot))))
    parts.append(_section(f"Atom types — {ref('Table 10b')}", _details(data, t.atom_types)))
    parts.append(_section("Per-case audit view", _note(
        "Pick a case and an agent × guard: which atom reached which tool and argument path, "
        "whether that was authorized, and what the guard did per attempted call. Ids and types "
        "only — never values."), audit_html(data, cases)))
    parts.append(_section(t.sensitivity.title, html_table(t.sensitivity), _note(t.sensitivity.note)))
    return parts


def _configs(data: RunData) -> list[Config]:
    return list(data.configs)


def _details(data: RunData, table: Table) -> str:
    refs = reference_configs(data)
    out = []
    for cfg in refs + [c for c in _configs(data) if c not in refs]:
        where = dict(zip(("Agent", "Guard", "Suite"), cfg, strict=True))
        out.append(f"<details{' open' if cfg in refs else ''}><summary>"
                   f"{html.escape(' / '.join(cfg))}</summary>"
                   f"{html_table(table, where=where, drop=('Agent', 'Guard', 'Suite'))}</details>")
    return "\n".join(out)
