"""The report as a newcomer reads it (issue 12): a summary with one sentence per guard computed
from summary.json, failed case-runs first, paper references explained, figures embedded, no
literal markdown in the HTML, and a scatter in which every series is distinct and no point hides
another — checked on the generated figure data, not on pixels."""

from __future__ import annotations

import itertools
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from test_report import make_run  # the miniature real run of test_report.py

from tpguard.benchmark.guards import make_guard
from tpguard.benchmark.report import RunData, build_reports, load_run
from tpguard.benchmark.report._markdown import caveats, run_facts
from tpguard.benchmark.report._plots import scatter_fig
from tpguard.benchmark.report._refs import REFS
from tpguard.benchmark.report._style import DODGE, scatter_series

GUARDS = ("off", "enforce", "redact")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("newcomer")
    make_run(run_dir, guards=GUARDS)
    build_reports(run_dir)
    return run_dir


def _rows(run_dir: Path) -> dict[tuple[str, str], dict[str, Any]]:
    summary = json.loads((run_dir / "summary.json").read_text())
    return {(r["agent"], r["guard"]): r for r in summary["rows"]}


def _drawn(fig: Any) -> list[tuple[float, float]]:
    return [(t.x[0], t.y[0]) for t in fig.data]


def _assert_distinct_and_apart(fig: Any, series: list[dict[str, Any]]) -> None:
    styles = [(t.marker.color, t.marker.symbol) for t in fig.data]
    assert len(set(styles)) == len(styles) == len(series)
    assert [(p["colour"], p["symbol"]) for p in series] == styles  # PNG and HTML share it
    pts = _drawn(fig)
    sx = (max(p["x"] for p in series) - min(p["x"] for p in series)) or 1.0  # the data's spans
    sy = (max(p["y"] for p in series) - min(p["y"] for p in series)) or 1.0
    for (ax, ay), (bx, by) in itertools.combinations(pts, 2):
        assert abs(ax - bx) >= 0.99 * DODGE * sx or abs(ay - by) >= DODGE * sy


def test_scatter_series_are_distinct_and_no_point_hides_another(run: Path) -> None:
    data = load_run(run)
    series = scatter_series(data)
    true = [(p["x"], p["y"]) for p in series]
    assert len(set(true)) < len(true)  # the run has identical points (oracle under 3 guards)
    fig = scatter_fig(data)
    _assert_distinct_and_apart(fig, series)
    colours = {p["guard"]: p["colour"] for p in series}
    markers = {p["agent"]: p["marker"] for p in series}
    assert len(set(colours.values())) == len(GUARDS) and len(set(markers.values())) == 2
    hover = [t.customdata[0][0] for t in fig.data]
    assert hover == [p["x"] for p in series]  # the tooltip shows the true TaskSuccess


def test_scatter_with_more_series_than_a_colour_cycle() -> None:
    """21 series (3 agents × 7 guards) at one identical point: Plotly's 10-colour cycle would
    repeat; here each is its own (colour, marker) and all are spread apart."""
    guards = ("off", "audit", "enforce", "redact", "langchain-pii", "presidio-redact",
              "drop-free-text")
    rows = [{"agent": a, "guard": g, "suite": "s", "n": 5, "TaskSuccess": 90.0, "MT-POI": 10.0}
            for a in ("oracle", "leaky", "leaky:x") for g in guards]
    data = RunData(Path("."), {}, [], [], {"rows": rows})
    series = scatter_series(data)
    assert len(series) == 21
    _assert_distinct_and_apart(scatter_fig(data), series)


def test_summary_has_one_sentence_per_guard_with_the_summary_numbers(run: Path) -> None:
    md = (run / "report.md").read_text()
    section = md.split("## Summary\n", 1)[1].split("\n## ", 1)[0]
    bullets = [ln[2:] for ln in section.splitlines() if ln.startswith("- ")]
    assert [b.split("`")[1] for b in bullets] == ["enforce", "redact"]
    rows = _rows(run)
    for guard, sentence in zip(("enforce", "redact"), bullets, strict=True):
        assert sentence.count(". ") == 0 and sentence.endswith(".")  # one sentence
        for agent in ("leaky:unit", "oracle"):
            r, off = rows[(agent, guard)], rows[(agent, "off")]
            if off["FOR"] > 0:
                rel = f"{100 * (r['FOR'] - off['FOR']) / off['FOR']:+.1f} %".replace("-", "−")
                assert (f"cut FOR from {off['FOR']:.2f} % to {r['FOR']:.2f} % ({rel})"
                        in sentence)
            else:
                assert f"left FOR at {r['FOR']:.2f} %" in sentence
            assert (f"TaskSuccess {r['TaskSuccess']:.2f} vs {off['TaskSuccess']:.2f} for "
                    f"`{agent}`") in sentence
    assert "This run scored 2 agents" in section and "on 6 cases" in section
    assert "Where tpguard loses:" in section


def test_html_has_no_literal_markdown_and_renders_code(run: Path) -> None:
    page = (run / "report.html").read_text()
    text = "".join(chunk.split("</script>", 1)[-1] for chunk in page.split("<script"))
    assert "`" not in text and "**" not in text
    assert "<code>enforce</code>" in text and "<h2>Summary</h2>" in text


def test_report_md_embeds_every_figure_and_explains_every_reference(run: Path) -> None:
    md = (run / "report.md").read_text()
    pngs = sorted(p.name for p in (run / "figures").glob("*.png"))
    assert "scatter.png" in pngs and len(pngs) >= 4
    for name in pngs:
        assert re.search(rf"!\[[^\]]+\]\(figures/{re.escape(name)}\)", md), name
    used = [k for k in REFS if k in md]
    assert len(used) >= 8
    for key in used:
        assert f"{key} ({REFS[key]})" in md, key


def test_errors_scoring_and_new_keys_are_shown_first(run: Path, tmp_path: Path) -> None:
    """Rows from the error-accounting runner (errors, n_total) and the scoring block are shown;
    the Errors section comes before everything but the summary."""
    run_dir = tmp_path / "run"
    shutil.copytree(run, run_dir)
    lines = (run_dir / "records.jsonl").read_text().splitlines()
    recs = [json.loads(x) for x in lines]
    failed = [r for r in recs if (r["agent"], r["guard"]) == ("oracle", "enforce")][:2]
    for r in failed:
        r["result"]["error"] = "OpenAIError"
    (run_dir / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    summary = json.loads((run_dir / "summary.json").read_text())
    for row in summary["rows"]:
        bad = 2 if (row["agent"], row["guard"]) == ("oracle", "enforce") else 0
        row.update(errors=bad, n_total=row["n"], n=row["n"] - bad, error_rate=bad / row["n"],
                   FreeTextFOR_field=row["FreeTextFOR"])
    summary["scoring"] = {"task": "binary"}
    (run_dir / "summary.json").write_text(json.dumps(summary))  # newer than records.jsonl
    build_reports(run_dir)
    md = (run_dir / "report.md").read_text()
    assert "summary.json was missing" not in md  # the runner's summary was used, not rebuilt
    assert md.index("## Errors: case-runs that failed") < md.index("## Run")
    errors = md.split("## Errors: case-runs that failed", 1)[1].split("\n## ", 1)[0]
    assert "| oracle | enforce | 2 | 6 | 33.33 | OpenAIError ×2 |" in errors
    assert "2 case-runs failed and are left out of the metrics" in md
    assert "Task is scored pass/fail" in md and "FreeTextFOR_field" in md
    page = (run_dir / "report.html").read_text()
    assert "Errors: case-runs that failed" in page and "OpenAIError ×2" in page


def test_caveats_follow_the_run(run: Path) -> None:
    note = ("leaky is a seeded behaviour model of failure modes the ToolPrivacyBench paper "
            "reports, not a measurement of any LLM")
    rows = [{"agent": "oracle", "guard": g, "suite": "s", "n": 3, "TaskSuccess": 100.0,
             "MT-POI": 0.0, "FOR": 0.0} for g in ("off", "presidio-redact")]
    described = make_guard("presidio-redact", presidio_model="none").describe()
    run_json = {"config": {"agents": ["oracle"], "domains": [], "limit": None, "seed": 1},
                "notes": [note], "guards": {"presidio-redact": described}}
    data = RunData(Path("x"), run_json, [], [], {"rows": rows})
    said = " ".join(caveats(data))
    assert "any LLM" not in said and "leaky" not in said  # no leaky agent, no disclaimer
    assert described["statement"] in said
    facts = dict(run_facts(data))
    assert "domains" not in facts and "limit" not in facts and facts["seed"] == "1"
    md = (run / "report.md").read_text()
    assert "not a measurement of any LLM" in md  # this run has leaky:unit


def test_no_loss_text_does_not_claim_a_cost_it_did_not_measure(tmp_path):
    """A run without `off` cannot say a mode "does not cost" TaskSuccess against `off`."""
    from tpguard.benchmark.report._load import RunData
    from tpguard.benchmark.report._overview import no_loss_text

    def data(guards):
        rows = [{"suite": "need-to-know", "agent": "oracle", "guard": g} for g in guards]
        return RunData(run_dir=tmp_path, run={}, records=[], scores=[], summary={"rows": rows})

    without_off = no_loss_text(data(["enforce", "enforce:compact"]))
    assert "not measured" in without_off and "against `off`" not in without_off
    with_off = no_loss_text(data(["off", "enforce", "redact"]))
    assert "neither costs TaskSuccess against `off`" in with_off


def test_a_run_with_cases_still_to_run_says_how_many_have_records(run: Path, tmp_path: Path) -> None:
    # a stopped or resumed run's plan (run.json "cases") is larger than what its records hold
    from tpguard.benchmark.report._overview import what_was_run

    part = tmp_path / "part"
    shutil.copytree(run, part)
    records = (part / "records.jsonl").read_text().splitlines()
    planned = len({json.loads(line)["case_id"] for line in records})
    meta = json.loads((part / "run.json").read_text())
    (part / "run.json").write_text(json.dumps({**meta, "cases": planned}))
    assert f"on {planned} cases" in what_was_run(load_run(part))
    first = json.loads(records[0])["case_id"]
    kept = [line for line in records if json.loads(line)["case_id"] != first]
    (part / "records.jsonl").write_text("\n".join(kept) + "\n")
    assert f"on {planned - 1} of {planned} cases" in what_was_run(load_run(part))
