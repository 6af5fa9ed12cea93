"""Real smolagents loops (ToolCallingAgent and CodeAgent) whose final answer carries an atom the
requester may not receive — and, for CodeAgent, whose printed step output does: what the requester
saw, per mode, through ``guard_agent`` (issue 11)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("smolagents") is None,
                                reason="smolagents not installed")

from exposure_scenario import (  # noqa: E402
    ANSWER,
    FORBIDDEN,
    POLICY,
    REDACTED,
    REFUSAL,
    REQUESTER,
    SESSION,
    Records,
)
from smolagents import CodeAgent, ToolCallingAgent, tool  # noqa: E402
from smolagents.memory import ActionStep  # noqa: E402
from smolagents.monitoring import LogLevel  # noqa: E402

from tpguard import Guard  # noqa: E402
from tpguard.adapters.smolagents import guard_agent  # noqa: E402
from tpguard.testing import SpanCapture  # noqa: E402
from tpguard.testing.smolagents import Code, ScriptedSmolModel  # noqa: E402

KINDS = ["toolcalling", "code"]
SCRIPT: list[Any] = [[{"name": "query_records", "arguments": {"patient_id": "P-1"}}], ANSWER]


def run(kind: str, mode: str, tmp_path: Path, spans: SpanCapture,
        script: list[Any] | None = None) -> tuple[Any, Any, ScriptedSmolModel]:
    records = Records(tmp_path / f"{kind}-{mode}.sqlite")

    @tool
    def query_records(patient_id: str) -> str:
        """Look up a patient's visits.

        Args:
            patient_id: the patient
        """
        return records.query(patient_id)

    guard = Guard(POLICY, mode=mode, tracer_provider=spans.provider)  # type: ignore[arg-type]
    model = ScriptedSmolModel(script or SCRIPT)
    cls = ToolCallingAgent if kind == "toolcalling" else CodeAgent
    agent = guard_agent(cls(tools=[query_records], model=model, verbosity_level=LogLevel.OFF,
                            max_steps=4), guard)
    with guard.session(**SESSION):
        answer = agent.run("When was I last seen?")
    return answer, agent, model


def console(agent: Any) -> str:
    """What a CodeAgent's steps showed (their observations: print output and last values)."""
    return "\n".join(s.observations or "" for s in agent.memory.steps if isinstance(s, ActionStep))


@pytest.mark.parametrize("kind", KINDS)
def test_audit_the_requester_sees_everything_and_the_spans_say_what_was_exposed(
        kind: str, tmp_path: Path, tpguard_spans: SpanCapture) -> None:
    answer, agent, _ = run(kind, "audit", tmp_path, tpguard_spans)
    assert answer == ANSWER
    final = [s for s in tpguard_spans.spans if s.name == "exit final_response"]
    assert len(final) == 1 and final[0].attributes["tpguard.exit.decision"] == "allow"
    assert list(final[0].attributes["tpguard.exit.forbidden.atom_ids"]) == ["bob.dx", "bob.name"]
    assert list(final[0].attributes["tpguard.exit.recipients"]) == [REQUESTER]
    if kind == "code":
        assert "hepatitis B" in console(agent)  # printed, and recorded as exposed
        printed = [s for s in tpguard_spans.spans if s.name == "exit console"]
        assert printed and list(printed[0].attributes["tpguard.exit.forbidden.atom_types"]) == [
            "diagnosis", "person_name"]
    assert not [v for v in FORBIDDEN if v in tpguard_spans.dump()]


@pytest.mark.parametrize("kind", KINDS)
def test_enforce_the_requester_sees_a_refusal_instead_of_the_answer(
        kind: str, tmp_path: Path, tpguard_spans: SpanCapture) -> None:
    answer, agent, model = run(kind, "enforce", tmp_path, tpguard_spans)
    assert answer == REFUSAL
    if kind == "code":
        shown = console(agent)
        assert not [v for v in FORBIDDEN if v in shown]
        assert "tpguard withheld this console to patient:P-1" in shown
        # the model read the guarded observation too: the printed rows never reached it
        assert not [v for v in FORBIDDEN if v in model.seen[-1][-1]["content"]]


@pytest.mark.parametrize("kind", KINDS)
def test_redact_the_requester_sees_placeholders(kind: str, tmp_path: Path, tpguard_spans: SpanCapture) -> None:
    answer, agent, _ = run(kind, "redact", tmp_path, tpguard_spans)
    if kind == "toolcalling":
        assert answer == REDACTED
    else:  # the console redacted Bob Ray's row first: the placeholders are numbered from there
        assert answer == REDACTED
        shown = console(agent)
        assert '"name": "[PERSON_NAME_1]"' in shown and '"diagnosis": "[DIAGNOSIS_1]"' in shown
        assert '"name": "Ann Lee"' in shown and not [v for v in FORBIDDEN if v in shown]


def test_code_agent_a_failing_step_has_its_print_output_guarded(
        tmp_path: Path, tpguard_spans: SpanCapture) -> None:
    script: list[Any] = [Code("print(query_records(patient_id='P-1'))\n1 / 0"), "Seen on 2024-03-02."]
    answer, agent, _ = run("code", "redact", tmp_path, tpguard_spans, script)
    assert answer == "Seen on 2024-03-02."
    step = next(s for s in agent.memory.steps if isinstance(s, ActionStep) and s.error is not None)
    assert "[DIAGNOSIS_1]" in (step.observations or "")
    assert not [v for v in FORBIDDEN if v in (step.observations or "")]


def test_guarding_twice_wraps_once(tmp_path: Path, tpguard_spans: SpanCapture) -> None:
    guard = Guard(POLICY, mode="enforce", tracer_provider=tpguard_spans.provider)
    agent = CodeAgent(tools=[], model=ScriptedSmolModel([ANSWER]), verbosity_level=LogLevel.OFF)
    executor = guard_agent(guard_agent(agent, guard), guard).python_executor
    assert guard_agent(agent, guard).python_executor is executor
    with guard.session(**SESSION):
        assert agent.run("hi") == REFUSAL
    assert len([s for s in tpguard_spans.spans if s.name == "exit final_response"]) == 1
