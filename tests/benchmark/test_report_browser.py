"""Each suite's ``report.html`` opened in a real browser (issue 29 item 7): headless Chromium (the
OS package, ``/usr/bin/chromium``) driven by Playwright. The page must load from disk with no
console error and no uncaught exception, open with its privacy–utility chart, and render every
chart (each plotly figure's SVG holds drawn marks; the opening chart one point per agent × guard).

Skipped when Chromium or Playwright is absent (``.ci/run`` installs Chromium where ``apt-get``
exists). ``TPGUARD_REPORT_SCREENSHOTS=DIR`` also saves the top of each report as
``DIR/report-<suite>.png`` (how ``docs/img/report-*.png`` are made).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tpguard.cli import app

CHROMIUM = Path(os.environ.get("TPGUARD_CHROMIUM", "/usr/bin/chromium"))
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SUITES = {  # suite → extra `bench run` options (small runs: the page, not the numbers, is tested)
    "need-to-know": ("--limit", "3", "--guard", "off,enforce,redact"),
    "public-derived": ("--limit", "3", "--guard", "off,enforce"),
    "acquisition": ("--limit", "6", "--guard", "off,enforce,directive"),
    "exposure": ("--limit", "6", "--guard", "off,exits,enforce"),
}

pytestmark = pytest.mark.skipif(not CHROMIUM.is_file() or shutil.which(str(CHROMIUM)) is None,
                                reason=f"Chromium not found at {CHROMIUM} (apt-get install chromium)")


@pytest.fixture(scope="module")
def browser() -> Any:
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        yield b
        b.close()


def _report(root: Path, suite: str, source: Path | None) -> Path:
    out = root / suite
    args = ["bench", "run", "--suite", suite, "--agent", "oracle,leaky", "--bootstrap", "50",
            "--out", str(out), *SUITES[suite]]
    if source is not None:
        args += ["--source", str(source)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    return out


def _screenshot(page: Any, path: Path) -> None:
    """The top of the page as a small PNG (a 128-colour palette: docs/img stays light)."""
    from io import BytesIO

    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    shot = Image.open(BytesIO(page.screenshot(type="png")))
    shot.convert("RGB").quantize(colors=128).save(path, optimize=True)


# Every plotly figure: its number of drawn marks (points, bars, heatmap cells / images) and the
# SVG's size; the opening chart's points by trace.
_PROBE = """() => {
  const figs = [...document.querySelectorAll('.plotly-graph-div')].map(d => {
    const svg = d.querySelector('svg.main-svg');
    const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
    const marks = d.querySelectorAll('.point, .bars path, .heatmaplayer image, .hm image').length;
    return {id: d.id, width: box.width, height: box.height, marks: marks};
  });
  const h2 = [...document.querySelectorAll('h2')].map(h => h.textContent);
  const points = document.querySelectorAll('#tradeoff-chart .scatterlayer .point').length;
  return {figs, h2, points};
}"""


@pytest.mark.parametrize("suite", list(SUITES))
def test_report_renders_in_chromium(suite: str, browser: Any, request: pytest.FixtureRequest,
                                    tmp_path: Path) -> None:
    source = request.getfixturevalue("public_data") if suite == "public-derived" else None
    run = _report(tmp_path, suite, source)
    rows = [r for r in json.loads((run / "summary.json").read_text())["rows"] if r.get("n")]
    problems: list[str] = []
    page = browser.new_page(viewport={"width": 1200, "height": 1130})
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
            if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("request", lambda r: problems.append(f"request: {r.url}")
            if not r.url.startswith(("file:", "data:", "blob:", "about:")) else None)
    page.goto((run / "report.html").as_uri(), wait_until="load")
    page.wait_for_selector("#tradeoff-chart svg.main-svg", timeout=20_000)
    found = page.evaluate(_PROBE)
    shots = os.environ.get("TPGUARD_REPORT_SCREENSHOTS")
    if shots:
        _screenshot(page, Path(shots) / f"report-{suite}.png")
    page.close()
    assert problems == []  # no console error, no exception, nothing fetched from the network
    assert found["h2"][:2] == ["Summary", found["h2"][1]] and found["h2"][1].startswith(
        "Privacy–utility trade-off")  # the chart opens the report, right after the summary
    assert found["points"] == len(rows)  # one point per agent × guard row
    assert found["figs"] and all(f["width"] > 100 and f["height"] > 100 and f["marks"] > 0
                                 for f in found["figs"]), found["figs"]
    if suite in ("need-to-know", "public-derived"):
        assert len(found["figs"]) >= 4  # the chart, sink and field bars, the heatmap
