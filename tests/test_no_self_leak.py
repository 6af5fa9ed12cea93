"""The guard must not become the leak: a full quick benchmark, every byte it shares, scanned.

``tpguard bench run --quick`` is run in-process with every log record captured (all levels, all
loggers). Then every atom value, alias, semantic variant and masked form of every case that ran is
looked for in: the log records, the messages the guard handed agents (block/redact observations
and recorded errors), and every shareable file of the run directory (``run.json``,
``summary.json``, ``spans.jsonl``, ``report.md``, ``report.html``, ``tables/*``, ``figures/*``).
Only ``audit.sqlite`` and ``records.jsonl`` may hold raw values: they are the benchmark's evidence
(what the backends received, the trajectories), kept for re-scoring and never meant to be shared
(``docs/threat-model.md``). The same scan over ``records.jsonl`` finds values, so the scanner bites.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("faker")

from tpguard.benchmark.cases.registry import load_suite
from tpguard.benchmark.runner import QUICK_GUARDS, RunConfig, run_benchmark
from tpguard.benchmark.runner.config import select_cases

pytestmark = pytest.mark.slow

# Embedded images, library bundles and random ids are not content the run wrote: drop them before
# scanning (a base64 PNG, a minified plotting library or a UUID4 — plotly names each figure's div
# with one — can contain a short digit run such as a card suffix by chance).
_DATA_URI = re.compile(r"data:[a-z/+.-]+;base64,[A-Za-z0-9+/=]+")
_LIBRARY_SCRIPT = re.compile(r"<script>(?:(?!</script>).){20000,}?</script>", re.S)
_HEX_ID = re.compile(r"\b[0-9a-f]{16,32}\b")
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=1)
        self.lines: list[str] = []
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


def _forms(cases: list[Any]) -> dict[str, set[str]]:
    """Every written form of every atom, keyed by ``case/atom`` (forms too short to mean anything
    on their own — under four characters — are left out; the policy refuses them anyway)."""
    out: dict[str, set[str]] = {}
    for case in cases:
        for atom in case.atoms:
            forms = {atom.value, *atom.aliases, *atom.variants, *atom.masked}
            out[f"{case.id}/{atom.id}"] = {f for f in forms if len(f.strip()) >= 4}
    return out


def _shareable(text: str) -> str:
    text = _LIBRARY_SCRIPT.sub("", text)
    text = _DATA_URI.sub("", text)
    text = _UUID.sub("", text)
    return _HEX_ID.sub("", text)


def _find(haystack: str, forms: dict[str, set[str]]) -> list[str]:
    """``case/atom: N-char form in '…context…'`` for every form found; the context is the text
    around the hit with the form itself written as ``<form>``, so a failure says where (and
    whether it is a real leak or a chance digit run) without printing the value."""
    low = haystack.casefold()
    hits = []
    for key, values in forms.items():
        for form in values:
            f = form.casefold()
            # a bare number counts only as a whole number, not inside another
            pattern = rf"(?<![0-9]){re.escape(f)}(?![0-9])" if f.isdigit() else re.escape(f)
            m = re.search(pattern, low)
            if m:
                around = (low[max(0, m.start() - 40):m.start()] + "\0" + low[m.end():m.end() + 40])
                for other in sorted(values, key=len, reverse=True):  # no form of the atom shown
                    around = around.replace(other.casefold(), "<form>")
                around = around.replace("\0", "<form>")
                hits.append(f"{key}: {len(form)}-char form in {around!r}")
    return hits


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("quick")
    # the quick guards plus audit: its row (the guard's flags against the evaluator's) is shared too
    config = RunConfig(out=out, quick=True, guards=(*QUICK_GUARDS, "audit"))
    cases = select_cases(load_suite(config.suite, seed=config.seed), config)
    capture = _Capture()
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(capture)
    root.setLevel(1)
    messages: list[str] = []

    def on_record(record: dict[str, Any]) -> None:
        for step in record["trajectory"]["calls"]:
            if step.get("outcome") != "ok":
                messages.append(json.dumps(step.get("result"), default=str))
        messages.append(json.dumps(record["result"].get("error"), default=str))
        messages.append(json.dumps(record.get("attempts"), default=str))

    try:
        run_benchmark(config, progress=False, on_record=on_record)
    finally:
        root.removeHandler(capture)
        root.setLevel(old_level)
    return {"out": out, "forms": _forms(cases), "logs": capture.lines, "messages": messages}


def test_the_run_blocked_and_logged_something(quick_run: dict[str, Any]) -> None:
    """The scan below is only worth something if the run exercised the paths that could leak."""
    assert any('"action": "block"' in m for m in quick_run["messages"])
    assert quick_run["forms"] and all(quick_run["forms"].values())


def test_logs_and_guard_messages_carry_no_atom(quick_run: dict[str, Any]) -> None:
    forms = quick_run["forms"]
    assert _find("\n".join(quick_run["logs"]), forms) == []
    assert _find("\n".join(quick_run["messages"]), forms) == []


def test_shareable_files_carry_no_atom(quick_run: dict[str, Any]) -> None:
    out: Path = quick_run["out"]
    raw_holders = {"audit.sqlite", "records.jsonl"}
    scanned = []
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        if path.name in raw_holders or path.name.startswith("."):
            continue
        data = path.read_bytes()
        if path.suffix == ".png":  # compressed pixels: look for the longer forms in the bytes
            long_forms = {k: {f for f in v if len(f) >= 8} for k, v in quick_run["forms"].items()}
            assert _find(data.decode("latin-1"), long_forms) == [], path.name
        else:
            text = _shareable(data.decode("utf-8", errors="replace"))
            assert _find(text, quick_run["forms"]) == [], path.relative_to(out)
        scanned.append(path.relative_to(out).as_posix())
    for name in ("run.json", "summary.json", "spans.jsonl", "report.md", "report.html"):
        assert name in scanned
    assert json.loads((out / "summary.json").read_text())["audit"]  # the audit row was scanned


def test_the_scanner_bites_on_the_files_that_do_hold_values(quick_run: dict[str, Any]) -> None:
    records = (quick_run["out"] / "records.jsonl").read_text(encoding="utf-8")
    assert len(_find(records, quick_run["forms"])) > 100
