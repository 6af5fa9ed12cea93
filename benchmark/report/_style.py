"""The privacy–utility scatter's encoding and layout, shared by the PNG (matplotlib) and the HTML
(plotly) so both draw the same picture: one colour per guard, one marker per agent (open markers
for a second or later suite), and a deterministic horizontal dodge so that no point hides another.

    series = scatter_series(data)    # [{label, agent, guard, suite, x, y, x_drawn, colour, …}]

Plotly's default 10-colour cycle repeated across 12–14 series, so ``leaky/enforce`` and
``oracle/presidio-redact`` shared a colour, and identical points were drawn on top of each other
(issue 12). Here colours are assigned per guard (colour-blind-safe Okabe–Ito first, fixed for the
known guards so a guard looks the same in every run), markers per agent.
"""

from __future__ import annotations

from typing import Any

from ._load import RunData
from ._tradeoff import chart_axes

__all__ = ["DODGE", "MARKERS", "MIN_SPAN", "axis_range", "guard_colours", "plotly_symbol",
           "scatter_series"]

# Okabe & Ito (2008) colour-blind-safe palette for the known guards, then tab20's hues (hex,
# so plotly and matplotlib read the same strings) for any others.
_KNOWN = {"off": "#000000", "audit": "#999999", "enforce": "#0072B2", "redact": "#56B4E9",
          "langchain-pii": "#E69F00", "presidio-redact": "#D55E00", "drop-free-text": "#CC79A7",
          # acquisition and exposure guards
          "exits": "#009E73", "return-min": "#E69F00", "directive": "#CC79A7",
          "exit:email": "#8c564b", "oracle-exits": "#7f7f7f"}
_MORE = ("#009E73", "#8c564b", "#bcbd22", "#17becf", "#9467bd", "#7f7f7f", "#aec7e8",
         "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#dbdb8d",
         "#9edae5", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173")

#: matplotlib marker → plotly symbol, one per agent in this order.
MARKERS: tuple[tuple[str, str], ...] = (
    ("o", "circle"), ("s", "square"), ("^", "triangle-up"), ("D", "diamond"),
    ("v", "triangle-down"), ("P", "cross"), ("X", "x"), ("*", "star"), ("<", "triangle-left"),
    (">", "triangle-right"), ("p", "pentagon"), ("h", "hexagon"), ("H", "hexagon2"),
    ("d", "diamond-tall"), ("8", "octagon"))
_PLOTLY = dict(MARKERS)

#: Points closer than this fraction of both axis spans are spread horizontally.
DODGE = 0.03


def plotly_symbol(marker: str, *, open_: bool = False) -> str:
    return _PLOTLY[marker] + ("-open" if open_ else "")


def guard_colours(guards: list[str]) -> dict[str, str]:
    """A distinct colour per guard (distinct for up to 27 guards; the known ones fixed)."""
    taken = {_KNOWN[g] for g in guards if g in _KNOWN}
    free = [c for c in dict.fromkeys([*_KNOWN.values(), *_MORE]) if c not in taken]
    out: dict[str, str] = {}
    for i, g in enumerate(guards):
        out[g] = _KNOWN.get(g) or (free.pop(0) if free else _MORE[i % len(_MORE)])
    return out


#: Percent axes are at least this wide: identical points (every TCR at 100 %) get a readable
#: axis and a dodge step one can see, not ticks at 99.98 … 100.06.
MIN_SPAN = 10.0


def _span(values: list[float]) -> float:
    lo, hi = min(values), max(values)
    return max(hi - lo, MIN_SPAN)


def axis_range(values: list[float]) -> tuple[float, float] | None:
    """``(lo, hi)`` for an axis whose data spread is narrower than :data:`MIN_SPAN` (centred,
    padded); ``None``: leave the axis to the plotting library."""
    if not values:
        return None
    lo, hi = min(values), max(values)
    if hi - lo >= MIN_SPAN:
        return None
    mid, half = (lo + hi) / 2, MIN_SPAN * 0.6
    return mid - half, mid + half


def _dodge(points: list[dict[str, Any]]) -> None:
    """Set ``x_drawn``: each point in order keeps its place unless a placed point lies within
    :data:`DODGE` of both axis spans; then it moves right, left, 2× right, … by one dodge step.
    O(n²) in points (a few dozen)."""
    if not points:
        return
    sx, sy = _span([p["x"] for p in points]), _span([p["y"] for p in points])
    step = DODGE * sx
    placed: list[tuple[float, float]] = []
    for p in points:
        k = 0
        while True:
            offset = ((k + 1) // 2) * step * (1 if k % 2 else -1) if k else 0.0
            x = p["x"] + offset
            if all(abs(x - px) >= step * 0.999 or abs(p["y"] - py) >= DODGE * sy
                   for px, py in placed):
                break
            k += 1
        p["x_drawn"] = x
        placed.append((x, p["y"]))


def scatter_series(data: RunData) -> list[dict[str, Any]]:
    """One point per row of the run's privacy–utility chart (:func:`._tradeoff.chart_axes`) that
    has both values: ``label, agent, guard, suite``, the true ``x`` (utility) and ``y`` (for
    ToolPrivacyBench 100 − MT-POI, else the leakage measure) with their 95 % interval ends, the
    drawn ``x_drawn``, ``colour`` (per guard), ``marker`` (matplotlib, per agent), ``symbol``
    (plotly, open for a later suite) and ``open``."""
    axes = chart_axes(data)
    rows = axes.rows
    multi = len({r["suite"] for r in rows}) > 1
    guards = list(dict.fromkeys(r["guard"] for r in rows))
    agents = list(dict.fromkeys(r["agent"] for r in rows))
    suites = sorted({r["suite"] for r in rows})
    colours = guard_colours(guards)
    out = []
    for r in rows:
        xv, yv = r.get(axes.x), r.get(axes.y)
        if xv is None or yv is None:
            continue
        ci = r.get("ci") or {}
        x_ci, y_ci = ci.get(axes.x) or [xv, xv], ci.get(axes.y) or [yv, yv]
        y, y_lo, y_hi = ((100.0 - yv, 100.0 - y_ci[1], 100.0 - y_ci[0]) if axes.privacy
                         else (yv, y_ci[0], y_ci[1]))
        marker = MARKERS[agents.index(r["agent"]) % len(MARKERS)][0]
        open_ = suites.index(r["suite"]) > 0
        out.append({
            "label": f"{r['agent']} / {r['guard']}" + (f" ({r['suite']})" if multi else ""),
            "agent": r["agent"], "guard": r["guard"], "suite": r["suite"],
            # an interval holds its point (a Wilson bound at 0 or 100 % can round past it)
            "x": xv, "y": y, "x_lo": min(x_ci[0], xv), "x_hi": max(x_ci[1], xv),
            "y_lo": min(y_lo, y), "y_hi": max(y_hi, y),
            "colour": colours[r["guard"]], "marker": marker, "open": open_,
            "symbol": plotly_symbol(marker, open_=open_)})
    _dodge(out)
    return out
