"""Feedback after a block (issue 31) through a real smolagents ``ToolCallingAgent`` loop.

The scripted model replays what a small real model was recorded doing after an ``enforce`` block
(``docs/threat-model.md``, "Feedback after a block"): it copies **its own last call** as the
prompt shows it ("Calling tools: [...]"). With :func:`rewrite_blocked_calls` that call has been
rewritten to its placeholder form, so the copy goes through and the withheld value never reaches
the model again; without it the same copy is refused until the run ends.
"""

from __future__ import annotations

import ast
import importlib.util
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("smolagents") is None,
                                reason="smolagents not installed")

from smolagents import CodeAgent, ToolCallingAgent, tool  # noqa: E402
from smolagents.monitoring import LogLevel  # noqa: E402

from tpguard import Guard, PolicyKB  # noqa: E402
from tpguard.adapters.smolagents import guard_tool, rewrite_blocked_calls  # noqa: E402
from tpguard.testing import SpanCapture  # noqa: E402
from tpguard.testing.smolagents import ScriptedSmolModel  # noqa: E402

PHONE, ADDRESS = "415-555-0199", "12 Elm Street, Springfield"
POLICY = {"atoms": [{"id": "phone", "type": "phone", "value": PHONE},
                    {"id": "addr", "type": "home_address", "value": ADDRESS}],
          "authorizations": [{"atom": "phone", "tool": "handoff", "allow": True}]}
LEAKY = {"phone": PHONE, "summary": f"Client at {ADDRESS} needs a call back"}
REWRITTEN = {"phone": PHONE, "summary": "Client at [HOME_ADDRESS_1] needs a call back"}


def copies_its_last_call(first: list[dict[str, Any]], tries: int = 3):
    """After a refusal, resend the last "Calling tools" of the prompt as it stands."""
    state = {"resent": 0}

    def turn(messages: list[dict[str, str]]) -> Any:
        calls = [m["content"] for m in messages if m["content"].startswith("Calling tools:")]
        if not calls:
            return first
        if "tpguard" not in messages[-1]["content"] or state["resent"] >= tries:
            return "done"
        state["resent"] += 1
        last = ast.literal_eval(calls[-1].removeprefix("Calling tools:\n"))
        return [{"name": c["function"]["name"], "arguments": c["function"]["arguments"]} for c in last]

    return turn


def make_agent(spans: SpanCapture, first: list[dict[str, Any]], *, rewrite: bool = True,
               escalate: str | None = None, compact: bool = False) -> tuple[ToolCallingAgent, ScriptedSmolModel, list[dict[str, Any]]]:
    guard = Guard(PolicyKB.from_dict(POLICY), mode="enforce", escalate=escalate,  # type: ignore[arg-type]
                  tracer_provider=spans.provider)
    received: list[dict[str, Any]] = []

    @tool
    def handoff(phone: str, summary: str) -> str:
        """Hand the case over.

        Args:
            phone: the client's phone
            summary: what the team needs to know
        """
        received.append({"phone": phone, "summary": summary})
        return "handed over"

    guarded = guard_tool(handoff, purpose="hand the case over", sink="handoff",
                         free_text=["summary"], guard=guard)
    model = ScriptedSmolModel(copies_its_last_call(first))
    agent = ToolCallingAgent(tools=[guarded], model=model, max_steps=6, verbosity_level=LogLevel.OFF)
    if rewrite:
        rewrite_blocked_calls(agent, compact=compact)
    return agent, model, received


def after_block(model: ScriptedSmolModel) -> str:
    return "\n".join(m["content"] for seen in model.seen[1:] for m in seen)


def test_blocked_call_is_rewritten_in_memory_and_the_copy_goes_through(tpguard_spans: SpanCapture) -> None:
    agent, model, received = make_agent(tpguard_spans, [{"name": "handoff", "arguments": LEAKY}])
    assert agent.run("hand the case over") == "done"
    assert received == [REWRITTEN]
    refusal = model.seen[1][-1]["content"]
    assert refusal.startswith("Observation:\ntpguard replaced the home_address in summary with "
                              "[HOME_ADDRESS_1] in your call above")
    # neither the "Calling tools" record nor the model's own text output kept the address
    assert ADDRESS not in after_block(model)
    assert ADDRESS not in repr(agent.memory.get_full_steps())
    span = tpguard_spans.tool_spans("handoff")[0]
    assert span.attributes["tpguard.decision"] == "block"
    assert [dict(e.attributes or {}) for e in span.events if e.name == "tpguard.call_rewritten"] == [{
        "tpguard.rewrite.where": "smolagents-memory", "tpguard.rewrite.paths": ("summary",),
        "tpguard.rewrite.atom_types": ("home_address",)}]
    assert ADDRESS not in tpguard_spans.dump()


def test_a_model_that_writes_placeholders_itself_goes_through(tpguard_spans: SpanCapture) -> None:
    """The other recorded reply: a resend with the placeholders the refusal named."""
    agent, model, received = make_agent(tpguard_spans, [])
    model._script = [[{"name": "handoff", "arguments": LEAKY}],
                     [{"name": "handoff", "arguments": REWRITTEN}], "done"]
    assert agent.run("hand the case over") == "done"
    assert received == [REWRITTEN]
    assert ADDRESS not in after_block(model)


def test_without_the_rewrite_the_copy_is_refused_every_time(tpguard_spans: SpanCapture) -> None:
    agent, model, received = make_agent(tpguard_spans, [{"name": "handoff", "arguments": LEAKY}],
                                        rewrite=False)
    agent.run("hand the case over")
    assert received == []
    assert ADDRESS in after_block(model)  # the old feedback: the model keeps reading its value


def test_escalation_rewrites_the_byte_identical_resend(tpguard_spans: SpanCapture) -> None:
    agent, _, received = make_agent(tpguard_spans, [{"name": "handoff", "arguments": LEAKY}],
                                    rewrite=False, escalate="redact")
    agent.run("hand the case over")
    assert received == [REWRITTEN]
    first, second = tpguard_spans.tool_spans("handoff")
    assert [s.attributes["tpguard.decision"] for s in (first, second)] == ["block", "redact"]
    assert [e.name for e in second.events if e.name.startswith("tpguard.esc")] == ["tpguard.escalated"]


@pytest.mark.parametrize("compact", [False, True])
def test_compact_drops_the_blocked_step_once_its_resend_went_through(
    compact: bool, tpguard_spans: SpanCapture
) -> None:
    """After the resend went through, the model reads one call and its result — the history
    ``redact`` leaves — instead of the call, its refusal and the resend."""
    agent, model, received = make_agent(tpguard_spans, [{"name": "handoff", "arguments": LEAKY}],
                                        compact=compact)
    assert agent.run("hand the case over") == "done"
    assert received == [REWRITTEN]
    last = "\n".join(m["content"] for m in model.seen[-1])
    calls = [m for m in model.seen[-1] if m["content"].startswith("Calling tools:")]
    assert ("tpguard replaced" in last, len(calls)) == ((False, 1) if compact else (True, 2))
    assert ADDRESS not in last
    # the refusal stays on the record: the blocked call's span
    assert [s.attributes["tpguard.decision"] for s in tpguard_spans.tool_spans("handoff")] == [
        "block", "allow"]


def test_compact_keeps_a_blocked_step_whose_resend_failed(tpguard_spans: SpanCapture) -> None:
    """A resend that is refused again (here: another forbidden value) drops nothing."""
    agent, model, received = make_agent(tpguard_spans, [], compact=True)
    other = {"phone": PHONE, "summary": f"Client at {ADDRESS}, urgent"}
    model._script = [[{"name": "handoff", "arguments": LEAKY}],
                     [{"name": "handoff", "arguments": other}], "done"]
    agent.run("hand the case over")
    assert received == []
    assert sum("tpguard replaced" in m["content"] for m in model.seen[-1]) == 2


def test_code_agents_are_refused_with_a_reason() -> None:
    agent = CodeAgent(tools=[], model=ScriptedSmolModel(["done"]), verbosity_level=LogLevel.OFF)
    with pytest.raises(TypeError, match="CodeAgent's memory holds code"):
        rewrite_blocked_calls(agent)
