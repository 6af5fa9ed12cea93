"""Framework agents driven by scripted models through the gateway: LangChain ``create_agent``
(ScriptedChatModel, and ``ChatOpenAI`` over the loopback OpenAI-compatible server via
``base_url``) and smolagents ``ToolCallingAgent`` / ``CodeAgent`` (ScriptedSmolModel, and
``OpenAIServerModel`` over the loopback server). Plus the ``make_agent`` registry."""

from __future__ import annotations

import sys
from collections.abc import Callable
from importlib.util import find_spec
from typing import Any

import pytest
from test_agents_support import EnvGateway, suite_cases

from tpguard import Guard
from tpguard.benchmark.agents import AGENT_SPECS, LeakyAgent, OracleAgent, ReplayAgent, make_agent
from tpguard.benchmark.backends import AuditLog, Environment
from tpguard.benchmark.cases.schema import Case

needs_langchain = pytest.mark.skipif(find_spec("langchain") is None or find_spec("langchain_openai") is None,
                                     reason="langchain not installed")
needs_smolagents = pytest.mark.skipif(find_spec("smolagents") is None, reason="smolagents not installed")
DONE = "All workflow steps are complete."


def _leaky_summary(case: Case) -> dict[str, Any]:
    """The last ground-truth call (a handoff) with private facts pasted into its summary."""
    last = case.ground_truth[-1]
    phone = next(a for a in case.atoms if a.type == "person_name")
    return {**last.arguments, "summary": f"Applicant {phone.value}; see earlier notes."}


def _next_call(gw: EnvGateway, case: Case, *, leak_last: bool) -> Any:
    """Decide the next turn from what the gateway saw: the next ground-truth call, or retry."""
    done = sum(1 for s in gw.seen if s.observation.ok)
    if done >= len(case.ground_truth):
        return None
    call = case.ground_truth[done]
    args = dict(call.arguments)
    last_blocked = bool(gw.seen) and gw.seen[-1].observation.blocked
    if leak_last and done == len(case.ground_truth) - 1 and not last_blocked:
        args = _leaky_summary(case)
    return call.tool, args


def _env(case: Case, audit: AuditLog, mode: str | None = None) -> EnvGateway:
    guard = Guard(case.policy, mode=mode) if mode else None  # type: ignore[arg-type]
    return EnvGateway(Environment(case, audit, "fw"), guard)


def _assert_completed(case: Case, gw: EnvGateway, audit: AuditLog) -> None:
    trajectory = audit.trajectory("fw", case.id)
    assert [(c.tool, c.arguments) for c in trajectory.calls] == [
        (g.tool, {k: v for k, v in g.arguments.items()}) for g in case.ground_truth]
    assert gw.env.s_task == 1.0


# -- LangChain --------------------------------------------------------------------------------------
@needs_langchain
def test_langchain_agent_completes_a_case_and_sees_blocks_as_error_tool_messages() -> None:
    from langchain_core.messages import BaseMessage, SystemMessage, ToolMessage

    from tpguard.benchmark.agents.langchain_agent import LangChainAgent
    from tpguard.testing.langchain import ScriptedChatModel

    case = suite_cases()[0]
    with AuditLog(":memory:") as audit:
        gw = _env(case, audit, "enforce")

        def turn(messages: list[BaseMessage]) -> Any:
            nxt = _next_call(gw, case, leak_last=True)
            return DONE if nxt is None else [{"name": nxt[0], "args": nxt[1]}]

        model = ScriptedChatModel(turns=turn)
        result = LangChainAgent(model).run(case, gw)
        assert result.error is None and result.final_answer == DONE
        assert result.model_calls == len(case.ground_truth) + 2  # one retry, one final answer
        _assert_completed(case, gw, audit)
    assert sorted(model.bound_tools) == sorted(t.name for t in case.tools)
    # the tool-call ids reach the gateway
    assert [s.call_id for s in gw.seen][:2] == ["call_1_1", "call_2_1"]
    # the block reached the model as an error ToolMessage naming types and fields, not values
    errors = [m for m in model.seen[-1] if isinstance(m, ToolMessage) and m.status == "error"]
    assert len(errors) == 1 and "tpguard withheld" in errors[0].text and "summary" in errors[0].text
    assert all(a.value not in errors[0].text for a in case.atoms)
    # neutral system prompt: no policy, no privacy hint
    system = next(m for m in model.seen[0] if isinstance(m, SystemMessage)).text
    assert "privacy" not in system.lower() and "purpose" not in system.lower()
    assert case.task in {m.text for m in model.seen[0]}


@needs_langchain
def test_langchain_agent_model_error_becomes_the_error_type() -> None:
    from tpguard.benchmark.agents.langchain_agent import LangChainAgent
    from tpguard.testing.langchain import ScriptedChatModel

    case = suite_cases()[1]
    with AuditLog(":memory:") as audit:
        result = LangChainAgent(ScriptedChatModel(turns=[])).run(case, _env(case, audit))
    assert result.error == "ValueError" and result.final_answer is None


@needs_langchain
def test_langchain_agent_over_the_loopback_openai_server() -> None:
    from tpguard.testing.openai_server import ScriptedOpenAIServer

    case = suite_cases()[23]
    with AuditLog(":memory:") as audit:
        gw = _env(case, audit, "enforce")

        def turn(request: dict[str, Any]) -> Any:
            nxt = _next_call(gw, case, leak_last=True)
            return DONE if nxt is None else [{"name": nxt[0], "arguments": nxt[1]}]

        with ScriptedOpenAIServer(turn) as server:
            agent = make_agent("langchain:openai:scripted", base_url=server.base_url, api_key="test")
            result = agent.run(case, gw)
            requests = server.requests
        assert result.error is None and result.final_answer == DONE
        _assert_completed(case, gw, audit)
    assert requests[0]["model"] == "scripted"
    offered = {t["function"]["name"] for t in requests[0]["tools"]}
    assert offered == {t.name for t in case.tools}
    tool_msgs = [m for m in requests[-1]["messages"] if m["role"] == "tool"]
    assert any("tpguard withheld" in str(m["content"]) for m in tool_msgs)
    assert gw.seen[0].call_id == "call_1"


# -- smolagents -------------------------------------------------------------------------------------
def _smol_script(gw: EnvGateway, case: Case, *, leak_last: bool) -> Callable[[list[dict[str, str]]], Any]:
    def turn(messages: list[dict[str, str]]) -> Any:
        nxt = _next_call(gw, case, leak_last=leak_last)
        return DONE if nxt is None else [{"name": nxt[0], "arguments": nxt[1]}]

    return turn


@needs_smolagents
@pytest.mark.parametrize("code_agent", [False, True])
def test_smolagents_agent_completes_a_case(code_agent: bool) -> None:
    from tpguard.benchmark.agents.smolagents_agent import SmolagentsAgent
    from tpguard.testing.smolagents import ScriptedSmolModel

    case = suite_cases()[50]
    with AuditLog(":memory:") as audit:
        gw = _env(case, audit, "enforce")
        model = ScriptedSmolModel(_smol_script(gw, case, leak_last=True))
        result = SmolagentsAgent(model, code_agent=code_agent).run(case, gw)
        assert result.error is None and result.final_answer == DONE
        _assert_completed(case, gw, audit)
    assert sum(s.observation.blocked for s in gw.seen) == 1
    said = "\n".join(m["content"] for m in model.seen[-1])
    # a withheld call's observation is the guard's message, as tpguard's guard_tool returns it
    assert "tpguard withheld" in said and "Error: tpguard withheld" not in said
    start = said.index("tpguard withheld")
    message = said[start:said.index("refer to them generically", start)]
    assert "summary" in message and all(a.value not in message for a in case.atoms)
    if not code_agent:
        assert set(model.tools_offered[0]) == {t.name for t in case.tools} | {"final_answer"}


@needs_smolagents
def test_smolagents_agent_over_the_loopback_openai_server() -> None:
    from tpguard.testing.openai_server import ScriptedOpenAIServer

    case = suite_cases()[77]
    with AuditLog(":memory:") as audit:
        gw = _env(case, audit)

        def turn(request: dict[str, Any]) -> Any:
            nxt = _next_call(gw, case, leak_last=False)
            if nxt is None:
                return [{"name": "final_answer", "arguments": {"answer": DONE}}]
            return [{"name": nxt[0], "arguments": nxt[1]}]

        with ScriptedOpenAIServer(turn) as server:
            agent = make_agent("smolagents:scripted", base_url=server.base_url, api_key="test")
            result = agent.run(case, gw)
            n_requests = len(server.requests)
        assert result.error is None and result.final_answer == DONE
        _assert_completed(case, gw, audit)
    assert n_requests == len(case.ground_truth) + 1


# -- registry ---------------------------------------------------------------------------------------
def test_make_agent_specs(tmp_path: Any) -> None:
    assert isinstance(make_agent("oracle"), OracleAgent)
    leaky = make_agent("leaky")
    assert isinstance(leaky, LeakyAgent) and leaky.profile.name == "default"
    assert make_agent("leaky:careful").name == "leaky:careful"
    assert make_agent("leaky", profile="leaky").name == "leaky:leaky"
    replay = make_agent(f"replay:{tmp_path / 'x.jsonl'}")
    assert isinstance(replay, ReplayAgent)
    for bad, msg in [("gpt", "not a known agent kind"), ("leaky:wild", "no leaky profile"),
                     ("langchain", "needs a model"), ("replay:", "needs a path"), ("oracle:x", "not a known agent kind")]:
        with pytest.raises(ValueError, match=msg) as info:
            make_agent(bad)
        assert all(s in str(info.value) for s in AGENT_SPECS)


def test_reference_agents_import_no_framework() -> None:
    import subprocess

    code = ("import sys, tpguard.benchmark.agents as a; a.make_agent('leaky'); a.make_agent('oracle');"
            "print(any(m.split('.')[0] in ('langchain', 'smolagents', 'langgraph') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
