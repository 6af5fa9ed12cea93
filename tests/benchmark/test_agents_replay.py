"""``ReplayAgent``: trajectories recorded elsewhere (JSONL tool calls, JSONL runs, exported spans)
replayed through the gateway reproduce what the backends received, and score the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from test_agents_support import EnvGateway, run_agent, sample

from tpguard import Guard
from tpguard.benchmark.agents import LeakyAgent, Observation, ReplayAgent, make_agent
from tpguard.benchmark.backends import AuditLog, Environment
from tpguard.telemetry import JsonlSpanExporter, agent_run_span


def _calls(trajectory: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(c.tool, c.arguments) for c in trajectory.calls]


@pytest.fixture(scope="module")
def recorded() -> list[Any]:
    return run_agent(LeakyAgent("leaky"), sample(6), seed=1)


def test_replay_of_jsonl_tool_calls_reproduces_the_trajectory(tmp_path: Path, recorded: list[Any]) -> None:
    path = tmp_path / "calls.jsonl"
    with path.open("w") as fh:
        for r in recorded:
            for c in r.trajectory.calls:
                fh.write(json.dumps({"case_id": r.case.id, "tool": c.tool, "arguments": c.arguments}) + "\n")
    replayed = run_agent(make_agent(f"replay:{path}"), [r.case for r in recorded], run_id="replay")
    for old, new in zip(recorded, replayed, strict=True):
        assert new.result.error is None and new.result.extra["replayed"] == len(old.trajectory.calls)
        assert _calls(new.trajectory) == _calls(old.trajectory)
        assert new.score.metrics == old.score.metrics


def test_replay_of_jsonl_runs_keeps_the_final_answer_and_unknown_cases_run_nothing(
    tmp_path: Path, recorded: list[Any]
) -> None:
    path = tmp_path / "runs.jsonl"
    first = recorded[0]
    calls = [{"tool": c.tool, "arguments": c.arguments} for c in first.trajectory.calls]
    path.write_text(json.dumps({"case_id": first.case.id, "calls": calls, "final_answer": "done"}) + "\n")
    agent = ReplayAgent(path)
    [run] = run_agent(agent, [first.case])
    assert run.result.final_answer == "done"
    assert _calls(run.trajectory) == _calls(first.trajectory)
    [other] = run_agent(agent, [recorded[1].case])
    assert other.result.error == "UnknownCase" and other.trajectory.calls == []


def test_replay_reports_the_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"case_id": "c", "tool": "t", "arguments": {}}\n{"tool": "t"}\n')
    with pytest.raises(ValueError, match=r"bad\.jsonl:2: expected a 'case_id'"):
        _ = ReplayAgent(path).runs


class _SpanGateway(EnvGateway):
    """Records every call as a real ``execute_tool`` span (audit mode) — a trace written elsewhere."""

    def __init__(self, env: Environment, recorder: Guard) -> None:
        super().__init__(env)
        self._recorder = recorder

    def call(self, name: str, arguments: dict[str, Any], *, call_id: str | None = None) -> Observation:
        guard = self._recorder
        assert guard is not None
        with guard.intercept(name, arguments, call_id=call_id):
            return super().call(name, arguments, call_id=call_id)  # audit: the span only records


@pytest.mark.parametrize("recording", ["raw", "redacted"])
def test_replay_of_exported_spans(tmp_path: Path, recorded: list[Any], recording: str) -> None:
    path = tmp_path / "spans.jsonl"
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(JsonlSpanExporter(path)))
    originals = {}
    with AuditLog(":memory:") as audit:
        for r in recorded[:3]:
            guard = Guard(r.case.policy, mode="audit", record_arguments=recording,  # type: ignore[arg-type]
                          allow_raw_arguments=True, tracer_provider=provider)
            gw = _SpanGateway(Environment(r.case, audit, "orig"), guard)
            with agent_run_span(provider, "leaky", run_id="orig", case_id=r.case.id):
                LeakyAgent("leaky").run(r.case, gw, seed=1)
            originals[r.case.id] = audit.trajectory("orig", r.case.id)
    provider.shutdown()
    replayed = run_agent(ReplayAgent(path), [r.case for r in recorded[:3]], run_id="replay")
    for new in replayed:
        old = originals[new.case.id]
        assert [c.tool for c in new.trajectory.calls] == [c.tool for c in old.calls]
        if recording == "raw":
            assert _calls(new.trajectory) == _calls(old)
            assert new.score.metrics["FOR"] and new.score.metrics["FOR"] > 0
        else:  # placeholders replaced every detected atom: the values never left the trace
            text = json.dumps(_calls(new.trajectory))
            assert all(a.value not in text for a in new.case.atoms)
            assert not new.score.metrics["FOR"]
