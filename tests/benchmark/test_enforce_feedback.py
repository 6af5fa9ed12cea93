"""The ``enforce`` variants as benchmark guard conditions (issue 31), through the runner's real
``execute_case`` (gateway, SQLite audit log, scorer) and real framework loops.

The scripted model follows the ground truth, pastes forbidden atoms into the last call's free-text
slot, and after a refusal does what a small real model was recorded doing (docs/threat-model.md,
"Feedback after a block"): it **copies its own last call** from the conversation it is shown.

* ``enforce`` (the default feedback) rewrites that call in the agent's memory, so the copy carries
  placeholders and the case completes at FOR 0, the withheld values never shown to the model again;
* ``enforce:message`` (the refusal alone) gets the same copy back until the repeat stop ends the run;
* ``enforce:then-redact`` rewrites the repeated call at the guard — also at the gateway, which
  cannot touch the agent's memory.
"""

from __future__ import annotations

import ast
import json
from importlib.util import find_spec
from typing import Any

import pytest
from test_adapter_path import DONE, parity_cases, run_case
from test_agents_support import suite_cases

from tpguard.benchmark.agents import Agent, make_agent
from tpguard.benchmark.agents.registry import check_guard_path
from tpguard.benchmark.backends import AuditLog
from tpguard.benchmark.cases.schema import Case
from tpguard.benchmark.guards import GUARD_NAMES, make_guard

needs_langchain = pytest.mark.skipif(find_spec("langchain") is None, reason="langchain not installed")
needs_smolagents = pytest.mark.skipif(find_spec("smolagents") is None, reason="smolagents not installed")


def _leaky(case: Case) -> tuple[dict[str, Any], list[str]]:
    """The last ground-truth call with forbidden atoms added to its first free-text slot, and
    that slot's leaky text."""
    call = case.ground_truth[-1]
    values = [a.value for a in case.atoms if not case.policy.is_authorized(a.id, call.tool)][:2]
    slot = case.tool(call.tool).free_text[0]
    args = dict(call.arguments)
    args[slot] = f"{args.get(slot) or ''} Context: {'; '.join(values)}"
    return args, args[slot]


class Copier:
    """Ground truth, leaky last call; after a refusal, the last call the conversation shows."""

    def __init__(self, case: Case) -> None:
        self.case, self.step = case, 0

    def next(self, refused: bool, last_call: tuple[str, dict[str, Any]] | None) -> Any:
        if refused and last_call is not None:
            return last_call
        if self.step >= len(self.case.ground_truth):
            return None
        call = self.case.ground_truth[self.step]
        self.step += 1
        last = self.step == len(self.case.ground_truth)
        return call.tool, (_leaky(self.case)[0] if last else dict(call.arguments))


def _smolagents(case: Case, path: str) -> Agent:
    from tpguard.testing.smolagents import ScriptedSmolModel

    copier = Copier(case)

    def turn(messages: list[dict[str, Any]]) -> Any:
        shown = [m["content"] for m in messages if str(m["content"]).startswith("Calling tools:")]
        last = None
        if shown:
            c = ast.literal_eval(shown[-1].removeprefix("Calling tools:\n"))[0]["function"]
            last = (c["name"], c["arguments"])
        nxt = copier.next("tpguard" in str(messages[-1]["content"]), last)
        return DONE if nxt is None else [{"name": nxt[0], "arguments": nxt[1]}]

    agent = make_agent("smolagents:scripted", guard_path=path)
    agent._model = ScriptedSmolModel(turn)  # type: ignore[attr-defined]
    return agent


def _langchain(case: Case, path: str) -> Agent:
    from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

    from tpguard.testing.langchain import ScriptedChatModel

    copier = Copier(case)

    def turn(messages: list[BaseMessage]) -> Any:
        ai = [m for m in messages if isinstance(m, AIMessage) and m.tool_calls]
        last = (ai[-1].tool_calls[0]["name"], ai[-1].tool_calls[0]["args"]) if ai else None
        # the last tool or model message (the middleware may end the request on a user turn
        # asking it to resend: the model reacts to the refusal before it)
        end = next((m for m in reversed(messages) if isinstance(m, (ToolMessage, AIMessage))), None)
        nxt = copier.next(isinstance(end, ToolMessage) and end.status == "error", last)
        return DONE if nxt is None else [{"name": nxt[0], "args": nxt[1]}]

    agent = make_agent("langchain:scripted", guard_path=path)
    agent._model = ScriptedChatModel(turns=turn)  # type: ignore[attr-defined]
    return agent


def _seen_after_block(agent: Agent) -> str:
    """Every conversation the model was shown from the one after the leaky call on."""
    seen = agent._model.seen  # type: ignore[attr-defined]
    case_len = len(agent._copier_case.ground_truth)  # type: ignore[attr-defined]
    return "\n".join(str(m) for conv in seen[case_len:] for m in conv)


def _run(make: Any, path: str, guard: str) -> tuple[dict[str, Any], Agent, Case]:
    case = parity_cases()[0]
    agent = make(case, path)
    agent._copier_case = case  # type: ignore[attr-defined]
    with AuditLog(":memory:") as audit:
        record = run_case(case, agent, guard, audit, path)
    return record, agent, case


PATHS = [pytest.param(_smolagents, "decorator", marks=needs_smolagents, id="smolagents-decorator"),
         pytest.param(_langchain, "middleware", marks=needs_langchain, id="langchain-middleware")]


@pytest.mark.parametrize(("make", "path"), PATHS)
def test_enforce_rewrites_the_blocked_call_and_the_case_completes(make: Any, path: str) -> None:
    record, agent, case = _run(make, path, "enforce")
    assert record["result"]["error"] is None and record["result"]["final_answer"] == DONE
    assert [a["action"] for a in record["attempts"]][-2:] == ["block", "allow"]
    assert record["score"]["metrics"]["FOR"] == 0.0
    assert record["score"]["metrics"]["Workflow"] == 1.0
    # the blocked call's text never reached the model again (the task's own text aside, the
    # model's last call now reads "Context: [PLACEHOLDER_1]; ...")
    _, leaky_text = _leaky(case)
    after = _seen_after_block(agent)
    assert leaky_text not in after and "Context: [" in after


@pytest.mark.parametrize(("make", "path"), PATHS)
@pytest.mark.parametrize("guard", ["enforce", "enforce:compact"])
def test_enforce_leaves_no_refusal_in_what_the_model_reads_last(make: Any, path: str, guard: str) -> None:
    """``enforce`` (and ``enforce:compact``, the published runs' name for it): once the resend
    went through, the blocked turn and its refusal are gone from the conversation the model is
    shown; ``enforce:no-compact`` keeps them."""
    record, agent, _ = _run(make, path, guard)
    assert record["guard"] == guard
    assert record["result"]["error"] is None and record["result"]["final_answer"] == DONE
    assert [a["action"] for a in record["attempts"]][-2:] == ["block", "allow"]
    assert record["score"]["metrics"]["FOR"] == 0.0 and record["score"]["metrics"]["Workflow"] == 1.0
    last = "\n".join(str(m) for m in agent._model.seen[-1])  # type: ignore[attr-defined]
    assert "tpguard replaced" not in last
    record, kept_agent, _ = _run(make, path, "enforce:no-compact")
    assert record["result"]["final_answer"] == DONE
    assert "tpguard replaced" in "\n".join(str(m) for m in kept_agent._model.seen[-1])  # type: ignore[attr-defined]


@pytest.mark.parametrize(("make", "path"), PATHS)
def test_enforce_message_alone_ends_on_the_repeat_stop(make: Any, path: str) -> None:
    record, _, _ = _run(make, path, "enforce:message")
    assert record["result"]["error"] == "RepeatedToolCall"
    assert {a["action"] for a in record["attempts"][-2:]} == {"block"}
    assert record["score"]["metrics"]["Workflow"] < 1.0


@pytest.mark.parametrize(("make", "path"), [
    pytest.param(_smolagents, "gateway", marks=needs_smolagents, id="smolagents-gateway"),
    pytest.param(_langchain, "gateway", marks=needs_langchain, id="langchain-gateway")])
@pytest.mark.parametrize("guard", ["enforce:then-redact", "enforce:no-compact:then-redact",
                                   "enforce:compact:then-redact"])
def test_then_redact_rewrites_the_repeated_call_at_the_gateway(make: Any, path: str, guard: str) -> None:
    record, _, _ = _run(make, path, guard)
    assert record["guard"] == guard
    assert record["result"]["error"] is None and record["result"]["final_answer"] == DONE
    assert [a["action"] for a in record["attempts"]][-2:] == ["block", "redact"]
    assert record["score"]["metrics"]["FOR"] == 0.0


def test_enforce_variants_are_guard_conditions() -> None:
    assert {"enforce", "enforce:message", "enforce:no-compact", "enforce:then-redact",
            "enforce:no-compact:then-redact", "enforce:compact"} <= set(GUARD_NAMES)
    for name in ("enforce", "enforce:compact", "enforce:then-redact"):
        assert make_guard(name).describe()["compact_after_resend"] is True
    for name in ("enforce:no-compact", "enforce:no-compact:then-redact"):
        described = make_guard(name).describe()
        assert "compact_after_resend" not in described and described["rewrite_blocked"] is True
    then = make_guard("enforce:then-redact")
    assert then.name == "enforce:then-redact"
    assert then.describe()["escalate"] == "redact" and then.describe()["rewrite_blocked"] is True
    assert make_guard("enforce:message").describe()["rewrite_blocked"] is False
    prepared = then.prepare(suite_cases()[0])
    assert prepared.guard.escalate == "redact"  # type: ignore[attr-defined]
    both = make_guard("enforce:compact:then-redact").describe()
    assert both["escalate"] == "redact" and both["compact_after_resend"] is True
    assert both["rewrite_blocked"] is True


@needs_smolagents
def test_instrumentor_refuses_every_enforce_variant() -> None:
    agent = make_agent("smolagents+instrumentor:scripted")
    for name in ("enforce", "enforce:then-redact", "enforce:message"):
        with pytest.raises(ValueError, match="cannot act through smolagents-instrumentor"):
            check_guard_path(agent, name)


@needs_smolagents
def test_the_rewrite_reaches_a_real_http_client() -> None:
    """smolagents' ``OpenAIServerModel`` over the loopback OpenAI-compatible server: the request
    after the block carries the rewritten call, which the "model" copies."""
    from tpguard.testing.openai_server import ScriptedOpenAIServer

    case = parity_cases()[0]
    copier = Copier(case)

    def text(message: dict[str, Any]) -> str:
        content = message.get("content")
        parts = content if isinstance(content, list) else [{"text": content or ""}]
        return "".join(str(p.get("text", "")) for p in parts)

    def turn(request: dict[str, Any]) -> Any:
        shown = [text(m) for m in request["messages"] if text(m).startswith("Calling tools:")]
        last = None
        if shown:
            c = ast.literal_eval(shown[-1].removeprefix("Calling tools:\n"))[0]["function"]
            last = (c["name"], c["arguments"])
        nxt = copier.next("tpguard" in text(request["messages"][-1]), last)
        return ([{"name": "final_answer", "arguments": {"answer": DONE}}] if nxt is None
                else [{"name": nxt[0], "arguments": nxt[1]}])

    with ScriptedOpenAIServer(turn) as server:
        agent = make_agent("smolagents:scripted", base_url=server.base_url, api_key="test")
        with AuditLog(":memory:") as audit:
            record = run_case(case, agent, "enforce", audit, "http")
        requests = server.requests
    assert record["result"]["error"] is None, record["result"]
    assert [a["action"] for a in record["attempts"]][-2:] == ["block", "allow"]
    _, leaky_text = _leaky(case)
    after_block = json.dumps(requests[len(case.ground_truth):])
    assert json.dumps(leaky_text)[1:-1] not in after_block


def test_reports_count_the_enforce_variants_as_tpguard_not_as_baselines() -> None:
    from tpguard.benchmark.report._families import ACQUISITION
    from tpguard.benchmark.report._verdicts import is_tpguard_mode

    for guard in ("enforce", "enforce:message", "enforce:then-redact", "redact", "audit"):
        assert is_tpguard_mode(guard) and ACQUISITION.is_tpguard(guard)
    for guard in ("off", "presidio-redact", "directive", "oracle-exits"):
        assert not is_tpguard_mode(guard) and not ACQUISITION.is_tpguard(guard)
