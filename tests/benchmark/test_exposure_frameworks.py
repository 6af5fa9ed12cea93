"""Framework agents as the exposure suite's target agent (issue 31, item 1): a real LangChain
``create_agent`` loop and a real smolagents ``ToolCallingAgent`` answer the target-blind
requester's requests with the session's tools and reply on the declared reply channel; the
exposure guards (session wrap) act on what they send. Scripted models, offline; plus the runner's
own path (``execute_exp_case``) over the loopback OpenAI-compatible server."""

from __future__ import annotations

from importlib.util import find_spec
from typing import Any

import pytest

from tpguard.benchmark.agents.exposure import SessionRun, run_session
from tpguard.benchmark.agents.exposure.framework import ExpAgentError, ExpFrameworkAgent
from tpguard.benchmark.cases.exposure import COLLECTION_TOOLS, ExpCase, generate, mentions
from tpguard.benchmark.guards.exposure import make_exp_guard
from tpguard.benchmark.metrics.exposure import ExpScorer
from tpguard.benchmark.runner._exposure import execute_exp_case, make_exp_agent

needs_langchain = pytest.mark.skipif(find_spec("langchain") is None or find_spec("langchain_openai") is None,
                                     reason="langchain not installed")
needs_smolagents = pytest.mark.skipif(find_spec("smolagents") is None, reason="smolagents not installed")
CASE = next(c for c in generate(0).cases
            if any(COLLECTION_TOOLS.get(t, ("",))[0] == "list" for t in c.tools))
FOUND = "Here is what I found: "


def _lister(case: ExpCase) -> str:
    return next(t for t in case.tools if COLLECTION_TOOLS.get(t, ("",))[0] == "list")


def _exposed(run: SessionRun, case: ExpCase) -> set[str]:
    """Unauthorized targets on visible channels (the evaluator's view, hand-rolled)."""
    return {t.id for o in run.observations if o.visible and o.status != "blocked"
            for t in case.targets if not case.authorized(o.recipient or "", t.id) and mentions(o.text, t)}


def _session(agent: Any, guard: str) -> SessionRun:
    return run_session(agent, CASE, guard=guard, wrap=make_exp_guard(guard).wrap(CASE, None))


def _langchain_agent() -> ExpFrameworkAgent:
    """Lists the first collection, then restates what it read in its reply (a model that
    over-shares, as ASLEval's agents do)."""
    from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage

    from tpguard.benchmark.agents.langchain_agent import LangChainAgent
    from tpguard.testing.langchain import ScriptedChatModel

    def turn(messages: list[BaseMessage]) -> Any:
        if isinstance(messages[-1], HumanMessage):
            return [{"name": _lister(CASE), "args": {}}]
        tool = next(m for m in reversed(messages) if isinstance(m, ToolMessage))
        return FOUND + tool.text

    model = ScriptedChatModel(turns=turn)
    agent = ExpFrameworkAgent(LangChainAgent(model, guard_path="gateway"))
    agent.model = model  # type: ignore[attr-defined]
    return agent


@needs_langchain
def test_langchain_agent_answers_each_request_and_replies_on_the_reply_channel() -> None:
    agent = _langchain_agent()
    run = _session(agent, "off")
    assert run.error is None and run.turns >= 2
    replies = [o for o in run.observations if o.recipient == "requester" and o.text.startswith(FOUND)]
    assert len(replies) == run.turns  # one reply per request, on the reply channel
    assert {o.tool for o in run.observations if o.tool} >= {_lister(CASE)}
    assert agent.model_calls == 2 * run.turns
    assert _exposed(run, CASE)  # unguarded, the restated listing exposes targets
    # the session is remembered: the second request's prompt holds the first reply
    second = agent.model.seen[2]  # type: ignore[attr-defined]
    assert "Earlier in this conversation" in second[-1].text


@needs_langchain
def test_the_exits_guard_acts_on_a_framework_agents_reply() -> None:
    off, guarded = _session(_langchain_agent(), "off"), _session(_langchain_agent(), "exits")
    assert _exposed(off, CASE) and not _exposed(guarded, CASE)
    assert any(o.status in ("blocked", "rewritten") for o in guarded.observations if o.visible)


@needs_smolagents
def test_smolagents_agent_answers_each_request() -> None:
    from tpguard.benchmark.agents.smolagents_agent import SmolagentsAgent
    from tpguard.testing.smolagents import ScriptedSmolModel

    def turn(messages: list[dict[str, Any]]) -> Any:
        last = str(messages[-1]["content"])
        if last.startswith("Observation:"):
            return FOUND + last.removeprefix("Observation:\n")
        return [{"name": _lister(CASE), "arguments": {}}]

    agent = ExpFrameworkAgent(SmolagentsAgent(ScriptedSmolModel(turn), guard_path="gateway"))
    run = _session(agent, "off")
    assert run.error is None
    assert sum(o.text.startswith(FOUND) for o in run.observations if o.recipient == "requester") == run.turns
    assert _exposed(run, CASE)


@needs_langchain
def test_a_model_failure_ends_the_session_with_a_value_free_error() -> None:
    from tpguard.benchmark.agents.langchain_agent import LangChainAgent
    from tpguard.testing.langchain import ScriptedChatModel

    agent = ExpFrameworkAgent(LangChainAgent(ScriptedChatModel(turns=[]), guard_path="gateway"))
    run = _session(agent, "off")
    assert run.error == ExpAgentError.__qualname__


@needs_langchain
def test_the_runner_runs_a_framework_spec_over_an_openai_compatible_endpoint() -> None:
    from tpguard.testing.openai_server import ScriptedOpenAIServer

    def turn(request: dict[str, Any]) -> Any:
        last = request["messages"][-1]
        if last["role"] == "user":
            return [{"name": _lister(CASE), "arguments": {}}]
        return FOUND + str(last["content"])

    with ScriptedOpenAIServer(turn) as server:
        options = {"base_url": server.base_url, "api_key": "test"}
        record = execute_exp_case(CASE, "langchain:openai:scripted", make_exp_guard("exit:email"),
                                  scorer=ExpScorer(), seed=0, run_id="t", tracer_provider=None,
                                  agent_options=options)
    assert record["error"] is None, record["error"]
    assert record["result"]["agent"] == "langchain:openai:scripted"
    assert record["result"]["model_calls"] == 2 * record["result"]["turns"]
    assert record["score"] is not None


def test_framework_specs_are_exposure_agents() -> None:
    with pytest.raises(ValueError, match="drop the '\\+PATH'"):
        make_exp_agent("langchain+middleware:openai:gpt-4.1-mini")
    with pytest.raises(ValueError, match="langchain:MODEL, smolagents:MODEL"):
        make_exp_agent("gpt")
