"""What building a report costs the process that runs it (issue 33): the PNGs are drawn once
each (``savefig`` drew twice after ``tight_layout``) without switching the caller's matplotlib
backend (the figures called ``matplotlib.use("Agg", force=True)``), at the sizes they had; and the
cyclic garbage collector is paused while it runs (it walked ``bench run``'s whole heap again and
again), then resumed."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from test_report import make_run  # the miniature real run of test_report.py

from tpguard.benchmark.report import _build as report_pkg  # where build_reports reads render_html
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


def test_the_garbage_collector_is_paused_while_the_reports_build(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_run(tmp_path)
    seen: list[bool] = []
    real_render = report_pkg.render_html

    def render(*args: object) -> str:
        seen.append(gc.isenabled())
        return real_render(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(report_pkg, "render_html", render)
    assert gc.isenabled()
    build_reports(tmp_path, figures=False)
    assert seen == [False]  # no collection walks the caller's heap during the build
    assert gc.isenabled()  # and the collector is back
    gc.disable()  # a caller that turned it off keeps it off
    try:
        build_reports(tmp_path, figures=False)
        assert not gc.isenabled()
    finally:
        gc.enable()
