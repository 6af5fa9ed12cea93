"""Errors are results of their own (issue 12, item 1): an agent that cannot start stops the run in
seconds with one line; errored case-runs are counted per row, excluded from the metrics, make
``bench run`` exit 1, and a re-run retries exactly those."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tpguard.benchmark.backends import AuditLog
from tpguard.benchmark.cases.need_to_know import generate
from tpguard.benchmark.cases.schema import Case
from tpguard.benchmark.guards import make_guard
from tpguard.benchmark.metrics import CaseScorer
from tpguard.benchmark.runner import (
    RunConfig,
    iter_records,
    latest_records,
    record_error,
    run_benchmark,
)
from tpguard.benchmark.runner._execute import execute_case
from tpguard.cli import app

runner = CliRunner()


def _cases(n: int) -> list[Case]:
    return list(generate(0).cases[:n])


def _write_replay(path: Path, cases: list[Case]) -> None:
    """A replay file holding the ground truth of ``cases`` (the others have no recording)."""
    with path.open("a", encoding="utf-8") as fh:
        for case in cases:
            for g in case.ground_truth:
                fh.write(json.dumps({"case_id": case.id, "tool": g.tool,
                                     "arguments": g.arguments}) + "\n")


def _bench(*args: str) -> Any:
    return runner.invoke(app, ["bench", "run", "--no-report", *args])


@pytest.mark.parametrize(("agent", "env", "cause"), [
    ("langchain:openai:gpt-4.1-mini", {"OPENAI_API_KEY": None}, "OPENAI_API_KEY is not set"),
    ("smolagents:gpt-4.1-mini", {"OPENAI_API_KEY": None}, "OPENAI_API_KEY is not set"),
    ("replay:{tmp}/missing.jsonl", {}, "no such file"),
])
def test_agent_that_cannot_start_exits_3_in_seconds_with_one_line(
        tmp_path: Path, agent: str, env: dict[str, str | None], cause: str) -> None:
    out = tmp_path / "run"
    started = time.perf_counter()
    res = runner.invoke(app, ["bench", "run", "--agent", agent.format(tmp=tmp_path), "--guard",
                              "off", "--limit", "2", "--out", str(out)], env=env)
    assert time.perf_counter() - started < 5
    assert res.exit_code == 3, res.output
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: agent ") and cause in lines[0]
    assert not out.exists()  # nothing ran, nothing was written


def test_unreachable_base_url_is_refused_before_any_case(tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    res = _bench("--agent", "langchain:some-model", "--base-url", f"http://127.0.0.1:{port}/v1",
                 "--guard", "off", "--limit", "1", "--out", str(tmp_path / "r"))
    assert res.exit_code == 3 and f"127.0.0.1:{port} (--base-url) is not reachable" in res.output
    assert not (tmp_path / "r").exists()


def test_replay_covering_no_selected_case_cannot_start(tmp_path: Path) -> None:
    replay = tmp_path / "other.jsonl"
    _write_replay(replay, [generate(0).cases[-1]])
    res = _bench("--agent", f"replay:{replay}", "--guard", "off", "--limit", "2",
                 "--out", str(tmp_path / "r"))
    assert res.exit_code == 3 and "records none of the 2 selected cases" in res.output


def test_failing_case_runs_are_counted_not_scored_and_retried_exactly(tmp_path: Path) -> None:
    first, second, third = _cases(3)
    replay = tmp_path / "calls.jsonl"
    _write_replay(replay, [first])  # the 2nd and 3rd cases have no recording: the agent fails
    out = tmp_path / "run"
    args = ("--agent", f"oracle,replay:{replay}", "--guard", "off,enforce", "--limit", "3",
            "--out", str(out), "--json")
    res = _bench(*args)
    assert res.exit_code == 1, res.output
    assert "errors: replay:" in res.output and "UnknownCase (agent) ×2" in res.output
    rows = {(r["agent"], r["guard"]): r for r in json.loads(res.stdout)}
    bad = rows[(f"replay:{replay}", "off")]
    assert (bad["n"], bad["n_total"], bad["errors"]) == (1, 3, 2)
    assert bad["error_rate"] == pytest.approx(200 / 3)
    assert bad["error_types"] == {"UnknownCase (agent)": 2}
    # the replayed ground truth is the oracle's path: the one scored case is a full success,
    # which it would not be if the two errored case-runs were scored as zeros
    assert bad["TaskSuccess"] == pytest.approx(100.0)
    assert rows[("oracle", "off")]["errors"] == 0 and rows[("oracle", "off")]["n"] == 3
    records = list(iter_records(out / "records.jsonl"))
    err = next(r for r in records if r["case_id"] == second.id and r["agent"].startswith("replay"))
    assert err["error"] == {"type": "UnknownCase", "stage": "agent",
                            "message": "the replay file has no recording of this case"}
    errored = {(r["agent"], r["guard"], r["case_id"]) for r in records if record_error(r)}
    assert len(errored) == 4

    _write_replay(replay, [second, third])  # fix the input; the same configuration resumes
    seen: list[tuple[str, str, str]] = []
    result = run_benchmark(RunConfig(agents=("oracle", f"replay:{replay}"), guards=("off", "enforce"),
                                     limit=3, out=out, reports=False), progress=False,
                           on_record=lambda r: seen.append((r["agent"], r["guard"], r["case_id"])))
    assert set(seen) == errored and len(seen) == 4  # exactly the errored ones, once each
    assert result.retried == 4 and result.skipped == 12 - 4 and result.errors == 0
    assert len(list(iter_records(out / "records.jsonl"))) == 16  # appended, never rewritten
    assert len(latest_records(out / "records.jsonl")) == 12  # the last record of a key wins
    summary = json.loads((out / "summary.json").read_text())
    assert all(r["errors"] == 0 and r["n"] == 3 for r in summary["rows"])


def test_no_retry_errors_keeps_them_and_force_reruns_all(tmp_path: Path) -> None:
    replay = tmp_path / "calls.jsonl"
    _write_replay(replay, _cases(1))
    base = dict(agents=(f"replay:{replay}",), guards=("off",), limit=2, out=tmp_path / "r",
                reports=False)
    assert run_benchmark(RunConfig(**base), progress=False).errors == 1  # type: ignore[arg-type]
    kept = run_benchmark(RunConfig(**base, retry_errors=False), progress=False)  # type: ignore[arg-type]
    assert kept.executed == 0 and kept.errors == 1
    res = _bench("--agent", f"replay:{replay}", "--guard", "off", "--limit", "2", "--out",
                 str(tmp_path / "r"), "--no-retry-errors")
    assert res.exit_code == 1  # results still hold an error
    forced = run_benchmark(RunConfig(**base, force=True), progress=False)  # type: ignore[arg-type]
    assert forced.executed == 2 and forced.skipped == 0


class _Crashing:
    name = "crashing"

    def run(self, case: Case, gateway: Any, *, seed: int = 0) -> Any:
        gateway.call(case.ground_truth[0].tool, dict(case.ground_truth[0].arguments))
        raise RuntimeError("secret value 415-555-0199 in an exception message")


def test_an_agent_crash_is_a_value_free_error_record() -> None:
    case = _cases(1)[0]
    rec = execute_case(case, _Crashing(), "crashing", make_guard("off"), audit=AuditLog(":memory:"),
                       scorer=CaseScorer(case), seed=0, run_id="t", tracer_provider=None)
    assert rec["error"] == {"type": "RuntimeError", "stage": "agent", "message": None}
    assert "415-555-0199" not in json.dumps(rec["error"]) + json.dumps(rec["result"])
    assert len(rec["trajectory"]["calls"]) == 1  # what it did is kept for diagnosis


def test_legacy_records_errors_are_read() -> None:
    assert record_error({"result": {"error": "OpenAIError"}, "score": {}}) == {
        "type": "OpenAIError", "stage": "agent",
        "message": "the OpenAI client could not start (is OPENAI_API_KEY set?)"}
    assert record_error({"result": {"error": "GraphRecursionError"}, "score": {}}) is None
    assert record_error({"error": None, "score": {}}) is None


def test_a_guard_stopping_the_oracle_is_scored_not_an_error(tmp_path: Path) -> None:
    """A baseline that rewrites a needed value makes the backend reject the oracle's call: the
    oracle stops. That is what the guard costs in task success — a result, not a failed run."""
    result = run_benchmark(RunConfig(agents=("oracle",), guards=("off", "presidio-redact"),
                                     quick=True, out=tmp_path / "run", reports=False),
                           progress=False)
    rows = {r["guard"]: r for r in result.summary["rows"]}
    assert result.errors == 0 and rows["presidio-redact"]["errors"] == 0
    assert rows["presidio-redact"]["n"] == rows["off"]["n"] == 46
    assert rows["off"]["TaskSuccess"] == 100.0 > rows["presidio-redact"]["TaskSuccess"]
    assert record_error({"result": {"error": "ToolCallRejected"}, "score": {}}) is None
