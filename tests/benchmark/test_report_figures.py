"""The report's PNGs are drawn cheaply and leave the caller's matplotlib alone (issue 33): one
draw per figure (``savefig`` drew twice after ``tight_layout``), no backend switch (the figures
called ``matplotlib.use("Agg", force=True)`` in the caller's process), and the same six figures
as before with the sizes they had."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_report import make_run  # the miniature real run of test_report.py

from tpguard.benchmark.report import build_reports

matplotlib = pytest.importorskip("matplotlib")


def test_each_figure_is_drawn_once_and_the_backend_is_left_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from matplotlib.figure import Figure

    make_run(tmp_path)
    draws: list[tuple[float, float]] = []
    real_draw = Figure.draw

    def counting_draw(self: Figure, renderer: object) -> None:
        draws.append(tuple(self.get_size_inches()))
        real_draw(self, renderer)

    monkeypatch.setattr(Figure, "draw", counting_draw)
    before = matplotlib.get_backend()
    matplotlib.use("svg")  # a caller's own (non-interactive) backend
    try:
        paths = build_reports(tmp_path)
        assert matplotlib.get_backend() == "svg"
    finally:
        matplotlib.use(before)
    pngs = sorted(n for n in paths if n.endswith(".png"))
    assert pngs[:1] == ["figures/fields.png"] and "figures/scatter.png" in pngs
    assert len(draws) == len(pngs)  # one draw per PNG: the layout is settled before savefig
    from PIL import Image

    with Image.open(paths["figures/scatter.png"]) as img:
        assert img.size == (1100, 660)  # 10 × 6 in at 110 dpi, as before
