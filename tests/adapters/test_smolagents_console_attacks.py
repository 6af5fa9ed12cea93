"""A CodeAgent's whole console passes the exit guard (issue 28, "smolagents CodeAgent"): a step that
raises with a tool result in its message — ``raise ValueError(r)``, ``assert False, r``,
``int(r)``, ``{}[r]`` — shows the guarded text on the console, in the agent's memory and to the
model, in enforce and redact; audit records and changes nothing. Real CodeAgent loops driven by
the scripted model, the records tool on real SQLite."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("smolagents") is None,
                                reason="smolagents not installed")

from exposure_scenario import FORBIDDEN, POLICY, SESSION, Records  # noqa: E402
from smolagents import CodeAgent, tool  # noqa: E402
from smolagents.memory import ActionStep  # noqa: E402
from smolagents.monitoring import LogLevel  # noqa: E402

from tpguard import Guard  # noqa: E402
from tpguard.adapters.smolagents import guard_agent  # noqa: E402
from tpguard.testing import SpanCapture  # noqa: E402
from tpguard.testing.smolagents import Code, ScriptedSmolModel  # noqa: E402

RAISING = {
    "raise": "r = query_records(patient_id='P-1')\nraise ValueError(r)",
    "assert": "r = query_records(patient_id='P-1')\nassert False, r",
    "int": "r = query_records(patient_id='P-1')\nint(r)",
    "key": "r = query_records(patient_id='P-1')\n{}[r]",
    "fstring": "r = query_records(patient_id='P-1')\nraise RuntimeError(f'lookup failed: {r}')",
}


def run(code: str, mode: str, tmp_path: Path, spans: SpanCapture) -> tuple[Any, CodeAgent, ScriptedSmolModel]:
    records = Records(tmp_path / f"{mode}.sqlite")

    @tool
    def query_records(patient_id: str) -> str:
        """Look up a patient's visits.

        Args:
            patient_id: the patient
        """
        return records.query(patient_id)

    guard = Guard(POLICY, mode=mode, tracer_provider=spans.provider)  # type: ignore[arg-type]
    model = ScriptedSmolModel([Code(code), "Seen on 2024-03-02."])
    agent = guard_agent(CodeAgent(tools=[query_records], model=model, verbosity_level=LogLevel.DEBUG,
                                  max_steps=3), guard)
    with guard.session(**SESSION):
        answer = agent.run("When was I last seen?")
    return answer, agent, model


def failed_step(agent: CodeAgent) -> ActionStep:
    return next(s for s in agent.memory.steps if isinstance(s, ActionStep) and s.error is not None)


def leaked(text: str) -> list[str]:
    return [v for v in FORBIDDEN if v in text]


@pytest.mark.parametrize("how", sorted(RAISING))
@pytest.mark.parametrize("mode", ["enforce", "redact"])
def test_an_error_carrying_a_tool_result_is_guarded_on_the_console_in_memory_and_for_the_model(
        how: str, mode: str, tmp_path: Path, tpguard_spans: SpanCapture,
        capsys: pytest.CaptureFixture[str]) -> None:
    answer, agent, model = run(RAISING[how], mode, tmp_path, tpguard_spans)
    assert answer == "Seen on 2024-03-02."
    step = failed_step(agent)
    error = str(step.error)
    assert not leaked(error), error  # memory
    assert not leaked(str(step.to_messages())), "the step's messages"
    assert not leaked(capsys.readouterr().out), "the console"
    seen = "\n".join(str(m.get("content")) for m in model.seen[-1])
    assert not leaked(seen), "the model's next input"
    if mode == "redact":
        assert "[DIAGNOSIS_1]" in error and "Ann Lee" in error  # the requester's own row stays
    else:
        assert "tpguard withheld this console to patient:P-1" in error
    exits = [s for s in tpguard_spans.spans if s.name == "exit console"]
    assert exits and exits[-1].attributes["tpguard.exit.decision"] != "allow"
    assert not leaked(tpguard_spans.dump())


def test_audit_shows_the_error_as_it_was_and_records_it(
        tmp_path: Path, tpguard_spans: SpanCapture) -> None:
    _, agent, _ = run(RAISING["raise"], "audit", tmp_path, tpguard_spans)
    assert "hepatitis B" in str(failed_step(agent).error)
    exits = [s for s in tpguard_spans.spans if s.name == "exit console"]
    assert exits and list(exits[-1].attributes["tpguard.exit.forbidden.atom_ids"]) == ["bob.dx", "bob.name"]


def test_an_innocent_error_is_raised_unchanged(tmp_path: Path, tpguard_spans: SpanCapture) -> None:
    _, agent, _ = run("x = 1\n1 / 0", "enforce", tmp_path, tpguard_spans)
    error = str(failed_step(agent).error)
    assert "ZeroDivisionError" in error and "tpguard" not in error


def test_the_replacement_does_not_chain_the_original(tmp_path: Path, tpguard_spans: SpanCapture) -> None:
    _, agent, _ = run(RAISING["raise"], "enforce", tmp_path, tpguard_spans)
    err: BaseException | None = failed_step(agent).error
    while err is not None:  # the whole chain a traceback would print
        assert not leaked(str(err)), type(err).__name__
        err = err.__cause__ or err.__context__
