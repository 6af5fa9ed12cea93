"""What building a report costs the process that runs it (issue 33): the PNGs are drawn once
each (``savefig`` drew twice after ``tight_layout``) without switching the caller's matplotlib
backend (the figures called ``matplotlib.use("Agg", force=True)``), at the sizes they had; and the
objects alive before the build stay out of the garbage collector's way while it runs
(``gc.freeze``), then are handed back."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from test_report import make_run  # the miniature real run of test_report.py

import tpguard.benchmark.report as report_pkg
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


def test_the_heap_alive_before_the_build_is_frozen_while_it_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_run(tmp_path)
    seen: list[int] = []
    real_render = report_pkg.render_html

    def render(*args: object) -> str:
        seen.append(gc.get_freeze_count())
        return real_render(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(report_pkg, "render_html", render)
    assert gc.get_freeze_count() == 0
    build_reports(tmp_path, figures=False)
    assert seen and seen[0] > 1000  # the test session's objects were set aside
    assert gc.get_freeze_count() == 0  # and handed back
    gc.freeze()  # a caller that froze its own heap keeps it frozen
    try:
        frozen = gc.get_freeze_count()
        build_reports(tmp_path, figures=False)
        assert gc.get_freeze_count() > frozen // 2  # not unfrozen (a few frozen objects died)
    finally:
        gc.unfreeze()
