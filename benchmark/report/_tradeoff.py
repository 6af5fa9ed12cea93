"""The privacy–utility chart every report opens with: the suite's leakage measure against its
utility measure, one point per agent × guard, with the rows' 95 % intervals.

* ToolPrivacyBench (``need-to-know``, ``public-derived``): x = TaskSuccess, y = 100 − MT-POI (the
  paper's Figure 6; upper right is better), bootstrap intervals;
* acquisition: x = TCR, y = PLR (lower right is better), Wilson intervals;
* exposure: x = TCR, y = ECR (lower right is better), session-bootstrap intervals.

    axes = chart_axes(data)     # which of the three, and the rows it plots
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ._families import TOOLPRIVACYBENCH, Family, family_rows, present_families
from ._load import RunData
from ._refs import ref
from ._tables import ordered_configs

__all__ = ["Axes", "chart_axes"]


@dataclass
class Axes:
    """What the chart plots: ``x``/``y`` summary keys, ``y = 100 − key`` when ``privacy``."""

    family: Family
    x: str
    y: str
    privacy: bool
    x_label: str
    y_label: str
    better: str
    intervals: str
    rows: list[dict[str, Any]] = field(default_factory=list)

    @property
    def title(self) -> str:
        if self.family is TOOLPRIVACYBENCH:
            return f"Privacy–utility trade-off — as the paper's {ref('Figure 6')}"
        return f"Privacy–utility trade-off — {self.family.paper}"

    @property
    def reading(self) -> str:
        """One line under the chart: what the axes are and which way is better."""
        return (f"x = {self.x_label}, y = {self.y_label} ({self.better}); colour = guard, "
                f"marker = agent; bars are {self.intervals}.")


def chart_axes(data: RunData) -> Axes:
    """The run's chart: ToolPrivacyBench when the run has its rows, else its suite's family."""
    if data.legacy or not present_families(data.full_summary):
        return Axes(TOOLPRIVACYBENCH, "TaskSuccess", "MT-POI", True, "TaskSuccess (%)",
                    "privacy score = 100 − MT-POI", "upper right is better",
                    "95 % bootstrap intervals", ordered_configs(data))
    fam = present_families(data.full_summary)[-1]
    rows = sorted(family_rows(data.full_summary, fam),
                  key=lambda r: (r.get("suite", ""), r.get("agent", "")))
    intervals = ("Wilson 95 % intervals" if fam.name == "acquisition"
                 else "session-bootstrap 95 % intervals")
    return Axes(fam, fam.utility, fam.leak, False, f"{fam.utility} (%, {fam.utility_words})",
                f"{fam.leak} (%, {fam.leak_words})", "lower right is better", intervals, rows)
