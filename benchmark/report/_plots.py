"""Plotly figures of the HTML report (seed ``000_*`` Figures 6–7 and the atom-type × sink view).

* Privacy–utility scatter (Figure 6): x = TaskSuccess, y = 100 − MT-POI, one point per agent ×
  guard, error bars = the rows' bootstrap 95 % intervals.
* Bars by sink (Figure 7a: FOR, SWLR, FreeTextFOR) and by free-text field (Figure 7b:
  FTSlotRate, FreeTextFOR), one agent × guard at a time through a dropdown.
* Atom type × sink heatmap of FOR (or of unauthorized disclosure counts when the cases could not
  be regenerated), one agent × guard at a time.
"""

from __future__ import annotations

import html
from typing import Any

import plotly.graph_objects as go

from ._collect import ReportTables
from ._crosstab import Config, CrossTab
from ._load import RunData
from ._refs import ref
from ._style import axis_range, scatter_series
from ._tables import Table, ordered_configs
from ._tradeoff import chart_axes

__all__ = ["bar_fig", "config_label", "figures", "heatmap_fig", "scatter_fig", "scatter_points"]


def config_label(cfg: Config, multi_suite: bool) -> str:
    return f"{cfg[0]} / {cfg[1]}" + (f" ({cfg[2]})" if multi_suite else "")


def _multi_suite(data: RunData) -> bool:
    return len({r["suite"] for r in data.summary.get("rows", [])}) > 1


def scatter_points(data: RunData) -> list[dict[str, Any]]:
    """The scatter's points (:func:`._style.scatter_series`): true and drawn coordinates, style."""
    return scatter_series(data)


def scatter_fig(data: RunData) -> go.Figure:
    """The run's privacy–utility chart (:func:`._tradeoff.chart_axes`: Figure 6 for
    ToolPrivacyBench, leakage against TCR for acquisition and exposure) with the PNG's encoding:
    colour = guard, marker = agent, dodged ``x``; the hover shows the true values."""
    axes = chart_axes(data)
    x_name, y_name = html.escape(axes.x), html.escape(axes.y_label)
    fig = go.Figure()
    series = scatter_series(data)
    for p in series:
        fig.add_trace(go.Scatter(
            x=[p["x_drawn"]], y=[p["y"]], mode="markers", name=html.escape(p["label"]),
            marker={"size": 12, "color": p["colour"], "symbol": p["symbol"],
                    "line": {"width": 1, "color": p["colour"]}},
            error_x={"type": "data", "array": [p["x_hi"] - p["x"]],
                     "arrayminus": [p["x"] - p["x_lo"]], "color": p["colour"]},
            error_y={"type": "data", "array": [p["y_hi"] - p["y"]],
                     "arrayminus": [p["y"] - p["y_lo"]], "color": p["colour"]},
            customdata=[[p["x"]]],
            hovertemplate=f"{x_name} %{{customdata[0]:.2f}}<br>{y_name} %{{y:.2f}}"
                          "<extra>%{fullData.name}</extra>",
        ))
    fig.update_layout(title=html.escape(f"Privacy–utility trade-off ({axes.better}; colour = "
                                        "guard, marker = agent)"),
                      xaxis_title=html.escape(axes.x_label), yaxis_title=y_name,
                      height=560, template="plotly_white")
    for axis, keys in (("xaxis", ("x_drawn", "x_lo", "x_hi")), ("yaxis", ("y", "y_lo", "y_hi"))):
        if (span := axis_range([p[k] for p in series for k in keys])) is not None:
            fig.update_layout({axis: {"range": list(span)}})
    return fig


def _dropdown(fig: go.Figure, groups: list[tuple[str, int]]) -> None:
    """Show one group of traces at a time (groups are consecutive traces)."""
    total = sum(n for _, n in groups)
    buttons, start = [], 0
    for label, n in groups:
        vis = [start <= i < start + n for i in range(total)]
        buttons.append({"label": html.escape(label), "method": "update", "args": [{"visible": vis}]})
        start += n
    for i, trace in enumerate(fig.data):
        trace.visible = i < groups[0][1] if groups else True
    if len(groups) > 1:
        fig.update_layout(updatemenus=[{"buttons": buttons, "direction": "down", "x": 0.0,
                                        "xanchor": "left", "y": 1.18, "yanchor": "top"}])


def bar_fig(data: RunData, table: Table, key: str, metrics: tuple[str, ...], title: str
            ) -> go.Figure | None:
    """Horizontal grouped bars of ``metrics`` per ``key`` (sink or field), one config at a time."""
    idx = {c: i for i, c in enumerate(table.columns)}
    multi = _multi_suite(data)
    fig = go.Figure()
    groups = []
    for r in ordered_configs(data):
        cfg = (r["agent"], r["guard"], r["suite"])
        rows = [row for row in table.rows if tuple(row[:3]) == cfg]
        if not rows:
            continue
        names = [html.escape(str(row[idx[key]])) for row in rows]
        for m in metrics:
            fig.add_trace(go.Bar(y=names, x=[row[idx[m]] for row in rows], name=m,
                                 orientation="h", texttemplate="%{x:.2f}"))
        groups.append((config_label(cfg, multi), len(metrics)))
    if not groups:
        return None
    _dropdown(fig, groups)
    fig.update_layout(title=title, barmode="group", xaxis_title="%", template="plotly_white",
                      height=max(360, 60 + 34 * len({row[idx[key]] for row in table.rows})))
    return fig


def heatmap_fig(data: RunData, tabs: dict[Config, CrossTab]) -> go.Figure | None:
    multi = _multi_suite(data)
    fig = go.Figure()
    groups = []
    kind = "FOR (%)"
    for r in ordered_configs(data):
        cfg = (r["agent"], r["guard"], r["suite"])
        tab = tabs.get(cfg)
        if tab is None or not tab.atom_types:
            continue
        kind = "FOR (%)" if tab.kind == "FOR" else "unauthorized disclosures"
        types, sinks = tab.atom_types, tab.sinks
        z = [[tab.value(t, s) for s in sinks] for t in types]
        fig.add_trace(go.Heatmap(
            z=z, x=[html.escape(s) for s in sinks], y=[html.escape(t) for t in types],
            colorscale="Reds", zmin=0, zmax=100 if tab.kind == "FOR" else None,
            colorbar={"title": kind}, hoverongaps=False,
            hovertemplate="%{y} → %{x}: %{z:.2f}<extra></extra>"))
        groups.append((config_label(cfg, multi), 1))
    if not groups:
        return None
    _dropdown(fig, groups)
    n_types = max(len(tabs[c].atom_types) for c in tabs) if tabs else 1
    fig.update_layout(title=f"Atom type × sink — {kind}", template="plotly_white",
                      height=max(420, 120 + 18 * n_types), xaxis_title="sink",
                      yaxis_title="atom type")
    return fig


def figures(data: RunData, t: ReportTables, tabs: dict[Config, CrossTab]
            ) -> list[tuple[str, go.Figure | None]]:
    """``(section title, figure)`` of the ToolPrivacyBench sections in report order (the
    privacy–utility chart opens every report: :func:`scatter_fig`)."""
    return [
        (f"Leakage by information sink — {ref('Figure 7a')}",
         bar_fig(data, t.sinks, "Sink", ("FOR", "SWLR", "FreeTextFOR"), "FOR, SWLR, FreeTextFOR by sink")),
        (f"Free-text fields — {ref('Figure 7b')}",
         bar_fig(data, t.fields, "Field", ("FTSlotRate", "FreeTextFOR"),
                 "FTSlotRate and FreeTextFOR by free-text field")),
        ("Atom type × sink", heatmap_fig(data, tabs)),
    ]
