"""``tpguard bench share``: a value-free copy of a run that reports the same numbers, is checked
for every atom value before it is kept, and resumes as a run directory."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tpguard.benchmark.cases.need_to_know import generate
from tpguard.benchmark.report import SHARED_FILES
from tpguard.cli import app

runner = CliRunner()
RUN = ("--agent", "leaky", "--guard", "off,enforce", "--limit", "2")


def _bench(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["bench", *args])


def _values() -> dict[str, str]:
    """Every atom value of the first two need-to-know cases (seed 0), by ``case/atom``."""
    return {f"{c.id}/{a.id}": a.value for c in generate(seed=0).cases[:2] for a in c.atoms}


def _rows(run_dir: Path) -> list[dict[str, object]]:
    rows = json.loads((run_dir / "summary.json").read_text())["rows"]
    return sorted(rows, key=lambda r: (str(r["agent"]), str(r["guard"])))


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("share") / "run"
    result = _bench("run", *RUN, "--out", str(out))
    assert result.exit_code == 0, result.output
    return out


def test_the_share_holds_no_value_and_the_same_numbers(run_dir: Path, tmp_path: Path) -> None:
    raw = (run_dir / "records.jsonl").read_text()
    assert any(v in raw for v in _values().values())  # the run itself does hold values
    result = _bench("share", str(run_dir), str(tmp_path / "s"))
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "s").iterdir()) == sorted(SHARED_FILES)
    for name in SHARED_FILES:
        text = (tmp_path / "s" / name).read_text()
        assert not [k for k, v in _values().items() if v.casefold() in text.casefold()], name
    assert _rows(tmp_path / "s") == _rows(run_dir)
    calls = [c for line in (tmp_path / "s" / "records.jsonl").read_text().splitlines()
             for c in json.loads(line)["trajectory"]["calls"]]
    assert calls and all(set(c) == {"step", "tool", "outcome"} for c in calls)
    report = (tmp_path / "s" / "report.md").read_text()
    listed = report.split("## Files", 1)[1].split("\n## ", 1)[0]
    assert sorted(listed.replace("`", "").replace("- ", "").split()) == ["report.md", "summary.json"]
    assert "over 4 case-runs" in report  # the run's case-run time, whatever sessions it took


def test_a_share_resumes_as_a_run_directory(run_dir: Path, tmp_path: Path) -> None:
    assert _bench("share", str(run_dir), str(tmp_path / "s")).exit_code == 0
    work = tmp_path / "work"
    shutil.copytree(tmp_path / "s", work)
    again = _bench("run", *RUN, "--out", str(work), "--no-report")
    assert again.exit_code == 0, again.output
    assert "0 runs executed, 4 resumed" in again.output
    # a share of an interrupted run: the case-runs it lacks run, the ones it holds do not
    records = work / "records.jsonl"
    records.write_text("".join(records.read_text().splitlines(keepends=True)[:2]))
    (work / "summary.json").unlink()
    rest = _bench("run", *RUN, "--out", str(work), "--no-report")
    assert rest.exit_code == 0, rest.output
    assert "2 runs executed, 2 resumed" in rest.output
    assert _rows(work) == _rows(run_dir)


def test_a_value_in_the_share_refuses_it_without_printing_the_value(
        run_dir: Path, tmp_path: Path) -> None:
    planted = tmp_path / "planted"
    shutil.copytree(run_dir, planted)
    key, value = next(iter(_values().items()))
    lines = (planted / "records.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["domain"] = f"{first['domain']} ({value})"  # a field the share keeps
    (planted / "records.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    result = _bench("share", str(planted), str(tmp_path / "s"))
    assert result.exit_code == 1
    assert key.split("/")[1] in result.output and value not in result.output
    assert not (tmp_path / "s").exists()


def test_a_directory_with_other_files_is_left_alone(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "docs"
    out.mkdir()
    (out / "notes.md").write_text("mine")
    result = _bench("share", str(run_dir), str(out))
    assert result.exit_code == 2 and "holds other files than a share" in result.output
    assert (out / "notes.md").read_text() == "mine"
    assert _bench("share", str(run_dir), str(run_dir)).exit_code == 2
    assert _bench("share", str(tmp_path), str(tmp_path / "x")).exit_code == 2


def _own_suite_values(suite: str, case_ids: set[str]) -> dict[str, str]:
    """The private strings the share must not hold: acquisition k_acq/k_disc match strings,
    exposure target values — by ``case/item``."""
    if suite == "acquisition":
        from tpguard.benchmark.cases.acquisition import generate as acq

        cases = [c for c in acq(0) if c.id in case_ids]
        items = {f"{c.id}/{i.id}": s for c in cases for i in (*c.k_acq, *c.k_disc)
                 for s in i.strings if len(s) >= 4}
        facts = {f"{c.id}/completion": f for c in cases for f in c.completion.facts if len(f) >= 4}
        return {**items, **facts}
    from tpguard.benchmark.cases.exposure import generate as exp

    return {f"{c.id}/{t.id}": t.value for c in exp(0) if c.id in case_ids for t in c.targets
            if len(t.value) >= 4}


@pytest.mark.parametrize(("suite", "guards"), [("acquisition", "off,enforce"),
                                               ("exposure", "off,exit:email")])
def test_acquisition_and_exposure_runs_share_value_free_and_refuse_a_planted_value(
        suite: str, guards: str, tmp_path: Path) -> None:
    run = ("run", "--suite", suite, "--agent", "leaky", "--guard", guards, "--limit", "2",
           "--bootstrap", "0")
    out = tmp_path / "run"
    done = _bench(*run, "--out", str(out))
    assert done.exit_code == 0, done.output
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    values = _own_suite_values(suite, {r["case_id"] for r in records})
    raw = (out / "records.jsonl").read_text().casefold()
    if suite == "acquisition":  # the run keeps the calls' arguments and the agent's answers
        assert any(v.casefold() in raw for v in values.values())
    shared = _bench("share", str(out), str(tmp_path / "s"))
    assert shared.exit_code == 0, shared.output
    for name in SHARED_FILES:
        text = (tmp_path / "s" / name).read_text().casefold()
        assert not [k for k, v in values.items() if v.casefold() in text], name
    assert _rows(tmp_path / "s") == _rows(out)
    # resumable: a copy of the share runs nothing again
    work = tmp_path / "work"
    shutil.copytree(tmp_path / "s", work)
    again = _bench(*run, "--out", str(work), "--no-report")
    assert again.exit_code == 0 and "0 runs executed, 4 resumed" in again.output, again.output
    # a private string in a field the share keeps: refused, named by id, the value not printed
    key, value = next(iter(values.items()))
    first = dict(records[0], domain=f"{records[0]['domain']} ({value})")
    planted = tmp_path / "planted"
    shutil.copytree(out, planted)
    lines = (planted / "records.jsonl").read_text().splitlines()
    (planted / "records.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    refused = _bench("share", str(planted), str(tmp_path / "s2"))
    assert refused.exit_code == 1, refused.output
    assert key in refused.output and value not in refused.output
    assert not (tmp_path / "s2").exists()


def test_a_word_form_is_found_as_a_whole_word_only() -> None:
    """The scanner matches whole tokens, as the evaluator does: an acquisition completion fact
    ``Support`` is not a hit inside the domain id ``customer_support`` (which refused a real run's
    share), and still is one as a word of its own; digits keep their whole-number rule."""
    from tpguard.benchmark.report._share import _patterns

    [(_, pattern)] = _patterns([("case/completion", {"Support", "Ann Lee", "1441", "LGC-6672"})])
    assert not pattern.search('{"domain": "customer_support", "id": "t-21441"}')
    for text in ('"the support team"', '"Ann Lee (P-1)"', '"ref 1441."', '"files/file_lgc-6672.docx"'):
        assert pattern.search(text.casefold()), text
