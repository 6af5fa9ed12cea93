"""``figures/*.png`` with matplotlib (Agg): the privacy–utility scatter (seed ``000_*`` Figure 6),
FOR by sink and FreeTextFOR / FTSlotRate by free-text field across agent × guard (Figure 7), and
the atom type × sink heatmap of each agent's unguarded (``off``) configuration — the HTML report
has it for every agent × guard. Skipped, with a note, when matplotlib is not installed.

Drawn cheaply (issue 33: the figures were two thirds of a quick run's report build): matplotlib's
object API on one Agg canvas, without pyplot and without switching the process's backend; one
figure object cleared and reused, so figures of one size share a renderer and its text-metrics
cache; each figure made at the dpi it is saved at (tight layout and the saved draw measure the same
text), and the layout settled before saving, so ``savefig`` draws once instead of twice."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from ._collect import ReportTables, reference_configs
from ._crosstab import Config, CrossTab
from ._load import RunData
from ._style import MARKERS, axis_range, guard_colours, scatter_series
from ._tables import Table, ordered_configs, slug
from ._tradeoff import chart_axes

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["write_figures"]


class _Canvas:
    """One matplotlib figure on an Agg canvas, cleared and reused for every PNG of a report."""

    def __init__(self) -> None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.fig: Figure = Figure()
        FigureCanvasAgg(self.fig)

    def axes(self, size: tuple[float, float], dpi: int) -> Axes:
        """A cleared figure of ``size`` inches at ``dpi``, with one axes."""
        from matplotlib.figure import SubplotParams

        fig = self.fig
        fig.clear()
        fig.set_dpi(dpi)
        fig.set_size_inches(*size)
        fresh = SubplotParams()  # what a new figure's tight_layout starts from
        fig.subplots_adjust(fresh.left, fresh.bottom, fresh.right, fresh.top)
        return fig.add_subplot()

    def save(self, path: Path) -> None:
        fig = self.fig
        fig.tight_layout()
        fig.set_layout_engine(None)  # tight_layout leaves a placeholder that makes savefig draw twice
        fig.savefig(path, dpi=fig.dpi)


def _styles(data: RunData) -> tuple[dict[str, str], dict[str, str]]:
    """One colour per guard, one marker per agent — the scatter's encoding, in every figure."""
    rows = ordered_configs(data)
    agents = list(dict.fromkeys(r["agent"] for r in rows))
    return (guard_colours(list(dict.fromkeys(r["guard"] for r in rows))),
            {a: MARKERS[i % len(MARKERS)][0] for i, a in enumerate(agents)})


def _scatter(canvas: _Canvas, data: RunData, path: Path) -> None:
    """Figure 6: colour = guard, marker = agent (open: a later suite); points that would cover
    each other are spread horizontally (:func:`._style.scatter_series`), error bars move along."""
    from matplotlib.lines import Line2D

    series = scatter_series(data)
    ax = canvas.axes((10, 6), dpi=110)
    for p in series:
        x = p["x_drawn"]
        ax.errorbar([x], [p["y"]], xerr=[[p["x"] - p["x_lo"]], [p["x_hi"] - p["x"]]],
                    yerr=[[p["y"] - p["y_lo"]], [p["y_hi"] - p["y"]]], fmt=p["marker"],
                    color=p["colour"], mfc="white" if p["open"] else p["colour"],
                    capsize=3, markersize=9, alpha=0.9, elinewidth=1)
    axes = chart_axes(data)
    ax.set_xlabel(f"{axes.x_label} — higher is better")
    ax.set_ylabel(axes.y_label + (" — higher is better" if axes.privacy else " — lower is better"))
    ax.set_title(f"Privacy–utility trade-off — {axes.family.paper} ({axes.intervals})")
    ax.grid(alpha=0.3)
    for setter, keys in ((ax.set_xlim, ("x_drawn", "x_lo", "x_hi")), (ax.set_ylim, ("y", "y_lo", "y_hi"))):
        if (span := axis_range([p[k] for p in series for k in keys])) is not None:
            setter(*span)
    if any(p["x_drawn"] != p["x"] for p in series):
        ax.text(0.0, -0.12, "Points that would cover each other are spread horizontally; exact "
                "values in the report's tables.", transform=ax.transAxes, fontsize=8, color="#555")
    guards = list(dict.fromkeys((p["guard"], p["colour"]) for p in series))
    agents = list(dict.fromkeys((p["agent"], p["marker"]) for p in series))
    if series:
        first = ax.legend(handles=[Line2D([], [], color=c, marker="o", ls="", ms=8, label=g)
                                   for g, c in guards], title="guard (colour)", fontsize=8,
                          loc="upper left", bbox_to_anchor=(1.01, 1.0))
        ax.add_artist(first)
        ax.legend(handles=[Line2D([], [], color="#444", marker=m, ls="", ms=8, label=a)
                           for a, m in agents], title="agent (marker)", fontsize=8,
                  loc="lower left", bbox_to_anchor=(1.01, 0.0))
    canvas.save(path)


def _grouped(canvas: _Canvas, data: RunData, table: Table, key: str, metric: str, title: str,
             path: Path) -> bool:
    """Vertical grouped bars: one group per sink/field, one bar per agent × guard (colour =
    guard, hatch = agent)."""
    idx = {c: i for i, c in enumerate(table.columns)}
    configs = [(r["agent"], r["guard"], r["suite"]) for r in ordered_configs(data)]
    keys = sorted({str(row[idx[key]]) for row in table.rows})
    if not keys or not configs:
        return False
    colours, _ = _styles(data)
    hatches = {a: h for a, h in zip(dict.fromkeys(c[0] for c in configs),
                                    ("", "//", "..", "xx", "\\\\", "oo"), strict=False)}
    vals = {(tuple(row[:3]), str(row[idx[key]])): row[idx[metric]] for row in table.rows}
    # +2.5 in: the legend sits right of the axes, where it cannot cover the tallest bars
    ax = canvas.axes((min(18, max(8, 0.12 * len(keys) * len(configs) + 3)) + 2.5, 5), dpi=110)
    width = 0.85 / len(configs)
    for j, cfg in enumerate(configs):
        xs = [i - 0.425 + (j + 0.5) * width for i in range(len(keys))]
        ys = [vals.get((cfg, k)) for k in keys]
        ax.bar(xs, [0.0 if y is None or math.isnan(y) else y for y in ys], width=width,
               color=colours[cfg[1]], hatch=hatches.get(cfg[0], ""), edgecolor="white",
               linewidth=0.3, label=f"{cfg[0]} / {cfg[1]}")
    ax.set_xticks(range(len(keys)), keys, rotation=30, ha="right")
    ax.set_ylabel(f"{metric} (%)")
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=1 if len(configs) <= 14 else 2, loc="upper left",
              bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    canvas.save(path)
    return True


def _heatmap(canvas: _Canvas, cfg: Config, tab: CrossTab, path: Path) -> None:
    types, sinks = tab.atom_types, tab.sinks
    z = [[math.nan if (v := tab.value(t, s)) is None else v for s in sinks] for t in types]
    ax = canvas.axes((max(5, 1.1 * len(sinks) + 3), max(3, 0.26 * len(types) + 1.5)), dpi=100)
    from matplotlib import colormaps

    cmap = colormaps["Reds"].with_extremes(bad="#d9d9d9")  # grey: no forbidden opportunity
    im = ax.imshow(z, aspect="auto", cmap=cmap, vmin=0,
                   vmax=100 if tab.kind == "FOR" else None)
    ax.set_xticks(range(len(sinks)), sinks, rotation=35, ha="right")
    ax.set_yticks(range(len(types)), types, fontsize=7)
    label = "FOR (%)" if tab.kind == "FOR" else "unauthorized disclosures"
    canvas.fig.colorbar(im, ax=ax, label=label)
    ax.set_title(f"Atom type × sink {label}: {cfg[0]} / {cfg[1]}", fontsize=10)
    canvas.save(path)


def write_figures(data: RunData, t: ReportTables, tabs: dict[Config, CrossTab], folder: Path
                  ) -> tuple[list[Path], list[str]]:
    """Write the PNGs; returns the paths written and notes (e.g. matplotlib missing)."""
    try:
        canvas = _Canvas()
    except ImportError:
        return [], ["matplotlib is not installed: figures/*.png were not written."]
    folder.mkdir(parents=True, exist_ok=True)
    out = [folder / "scatter.png"]
    _scatter(canvas, data, out[0])
    if not data.legacy:  # acquisition or exposure: the privacy–utility chart only
        return out, []
    for name, table, key, metric, title in (
        ("sinks.png", t.sinks, "Sink", "FOR", "FOR by information sink"),
        ("fields.png", t.fields, "Field", "FreeTextFOR", "FreeTextFOR by free-text field"),
        ("fields_slotrate.png", t.fields, "Field", "FTSlotRate", "FTSlotRate by free-text field"),
    ):
        if _grouped(canvas, data, table, key, metric, title, folder / name):
            out.append(folder / name)
    for cfg in reference_configs(data):  # the HTML has every agent × guard; PNGs the unguarded
        tab = tabs.get(cfg)
        if tab is None or not tab.atom_types:
            continue
        path = folder / f"heatmap_{slug(cfg[0])}_{slug(cfg[1])}_{slug(cfg[2])}.png"
        _heatmap(canvas, cfg, tab, path)
        out.append(path)
    return out, []
