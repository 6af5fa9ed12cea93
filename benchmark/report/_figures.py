"""``figures/*.png`` with matplotlib (Agg): the privacy–utility scatter (seed ``000_*`` Figure 6),
FOR by sink and FreeTextFOR by free-text field across agent × guard (Figure 7), and one atom type
× sink heatmap per agent × guard. Skipped, with a note, when matplotlib is not installed."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ._collect import ReportTables
from ._crosstab import Config, CrossTab
from ._load import RunData
from ._plots import scatter_points
from ._tables import Table, ordered_configs, slug

__all__ = ["write_figures"]


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _scatter(plt: Any, data: RunData, path: Path) -> None:
    fig, ax = plt.subplots(figsize=(8, 6))
    for p in scatter_points(data):
        ax.errorbar([p["x"]], [p["y"]], xerr=[[p["x"] - p["x_lo"]], [p["x_hi"] - p["x"]]],
                    yerr=[[p["y"] - p["y_lo"]], [p["y_hi"] - p["y"]]], fmt="o", capsize=3,
                    label=p["label"])
    ax.set_xlabel("TaskSuccess (%) — higher is better")
    ax.set_ylabel("privacy score = 100 − MT-POI — higher is better")
    ax.set_title("Privacy–utility trade-off")
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _grouped(plt: Any, data: RunData, table: Table, key: str, metric: str, title: str,
             path: Path) -> bool:
    idx = {c: i for i, c in enumerate(table.columns)}
    configs = [(r["agent"], r["guard"], r["suite"]) for r in ordered_configs(data)]
    keys = sorted({str(row[idx[key]]) for row in table.rows})
    if not keys:
        return False
    vals = {(tuple(row[:3]), str(row[idx[key]])): row[idx[metric]] for row in table.rows}
    fig, ax = plt.subplots(figsize=(10, max(3.5, 0.45 * len(keys) * max(1, len(configs)) / 3)))
    height = 0.8 / max(1, len(configs))
    for j, cfg in enumerate(configs):
        ys = [i + j * height for i in range(len(keys))]
        xs = [vals.get((cfg, k)) for k in keys]
        ax.barh(ys, [0.0 if x is None or math.isnan(x) else x for x in xs], height=height,
                label=f"{cfg[0]} / {cfg[1]}")
    ax.set_yticks([i + 0.4 - height / 2 for i in range(len(keys))], keys)
    ax.invert_yaxis()
    ax.set_xlabel(f"{metric} (%)")
    ax.set_title(title)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def _heatmap(plt: Any, cfg: Config, tab: CrossTab, path: Path) -> None:
    types, sinks = tab.atom_types, tab.sinks
    z = [[math.nan if (v := tab.value(t, s)) is None else v for s in sinks] for t in types]
    fig, ax = plt.subplots(figsize=(max(5, 1.1 * len(sinks) + 3), max(3, 0.26 * len(types) + 1.5)))
    im = ax.imshow(z, aspect="auto", cmap="Reds", vmin=0,
                   vmax=100 if tab.kind == "FOR" else None)
    ax.set_xticks(range(len(sinks)), sinks, rotation=35, ha="right")
    ax.set_yticks(range(len(types)), types, fontsize=7)
    label = "FOR (%)" if tab.kind == "FOR" else "unauthorized disclosures"
    fig.colorbar(im, ax=ax, label=label)
    ax.set_title(f"Atom type × sink {label}: {cfg[0]} / {cfg[1]}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_figures(data: RunData, t: ReportTables, tabs: dict[Config, CrossTab], folder: Path
                  ) -> tuple[list[Path], list[str]]:
    """Write the PNGs; returns the paths written and notes (e.g. matplotlib missing)."""
    try:
        plt = _pyplot()
    except ImportError:
        return [], ["matplotlib is not installed: figures/*.png were not written."]
    folder.mkdir(parents=True, exist_ok=True)
    out = [folder / "scatter.png"]
    _scatter(plt, data, out[0])
    for name, table, key, metric, title in (
        ("sinks.png", t.sinks, "Sink", "FOR", "FOR by information sink"),
        ("fields.png", t.fields, "Field", "FreeTextFOR", "FreeTextFOR by free-text field"),
        ("fields_slotrate.png", t.fields, "Field", "FTSlotRate", "FTSlotRate by free-text field"),
    ):
        if _grouped(plt, data, table, key, metric, title, folder / name):
            out.append(folder / name)
    for r in ordered_configs(data):
        cfg = (r["agent"], r["guard"], r["suite"])
        tab = tabs.get(cfg)
        if tab is None or not tab.atom_types:
            continue
        path = folder / f"heatmap_{slug(cfg[0])}_{slug(cfg[1])}_{slug(cfg[2])}.png"
        _heatmap(plt, cfg, tab, path)
        out.append(path)
    return out, []
