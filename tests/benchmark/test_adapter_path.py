"""Measuring the product as deployed (issue 12, item 8): framework agents guarded through
tpguard's own adapters score exactly as when the runner's gateway decides.

Each case runs through the runner's real ``execute_case`` (gateway, SQLite audit log, scorer) with
a scripted model that follows the ground truth but, on its first try, pastes forbidden atoms into
a free-text slot (the last call) and into a structured field (the second call), and retries a
withheld call without them. The record of the gateway path and of every adapter path must agree:
score dict, attempts (blocked ones included, with types and fields), what each backend received.
"""

from __future__ import annotations

from importlib.util import find_spec
from typing import Any

import pytest
from test_agents_support import suite_cases

from tpguard.benchmark.agents import Agent, make_agent
from tpguard.benchmark.backends import AuditLog
from tpguard.benchmark.cases.schema import Case
from tpguard.benchmark.guards import make_guard
from tpguard.benchmark.metrics import CaseScorer
from tpguard.benchmark.runner._execute import execute_case

needs_langchain = pytest.mark.skipif(find_spec("langchain") is None, reason="langchain not installed")
needs_smolagents = pytest.mark.skipif(find_spec("smolagents") is None, reason="smolagents not installed")
DONE = "All workflow steps are complete."
WITHHELD = "tpguard withheld"


def parity_cases() -> list[Case]:
    """Five cases from five domains, each with a structured field to leak into at step 2."""
    picked: list[Case] = []
    domains: set[str] = set()
    for case in suite_cases()[::37]:
        if case.domain not in domains and len(case.ground_truth) >= 3 and _structured(case):
            picked.append(case)
            domains.add(case.domain)
        if len(picked) == 5:
            break
    return picked


def _forbidden(case: Case, tool: str) -> list[str]:
    return [a.value for a in case.atoms if not case.policy.is_authorized(a.id, tool)]


def _structured(case: Case) -> str | None:
    """A string field of the second call that is not a free-text slot (nor the case id)."""
    call = case.ground_truth[1]
    slots = set(case.tool(call.tool).free_text)
    return next((k for k, v in call.arguments.items()
                 if isinstance(v, str) and k not in slots and k != "case_id"), None)


def leaky_arguments(case: Case, step: int) -> dict[str, Any]:
    """The ground-truth call of ``step`` with forbidden atoms added (steps 1 and last only)."""
    call = case.ground_truth[step]
    args = dict(call.arguments)
    if step == len(case.ground_truth) - 1:
        slot = case.tool(call.tool).free_text[0]
        args[slot] = f"{args.get(slot) or ''} Context: {'; '.join(_forbidden(case, call.tool)[:2])}"
    elif step == 1:
        field = _structured(case)
        assert field is not None
        args[field] = f"{args[field]} ({_forbidden(case, call.tool)[0]})"
    return args


class Script:
    """Deterministic model policy: the next ground-truth call (leaky on its first try), the same
    call without the leak after a withheld one, then the final answer."""

    def __init__(self, case: Case) -> None:
        self.case, self.step, self.retry = case, -1, False

    def next(self, last: str) -> tuple[str, dict[str, Any]] | None:
        if self.step >= 0 and WITHHELD in last and not self.retry:
            self.retry = True
        else:
            self.step, self.retry = self.step + 1, False
        if self.step >= len(self.case.ground_truth):
            return None
        call = self.case.ground_truth[self.step]
        args = dict(call.arguments) if self.retry else leaky_arguments(self.case, self.step)
        return call.tool, args


def _langchain(case: Case, path: str) -> Agent:
    from langchain_core.messages import BaseMessage

    from tpguard.testing.langchain import ScriptedChatModel

    script = Script(case)

    def turn(messages: list[BaseMessage]) -> Any:
        nxt = script.next(_without_continue_turn(messages)[-1].text)
        return DONE if nxt is None else [{"name": nxt[0], "args": nxt[1]}]

    agent = make_agent("langchain:scripted", guard_path=path)
    agent._model = ScriptedChatModel(turns=turn)  # type: ignore[attr-defined]
    return agent


def _smolagents(case: Case, path: str, code_agent: bool = False) -> Agent:
    from tpguard.testing.smolagents import ScriptedSmolModel

    script = Script(case)

    def turn(messages: list[dict[str, Any]]) -> Any:
        nxt = script.next(str(messages[-1]["content"]))
        return DONE if nxt is None else [{"name": nxt[0], "arguments": nxt[1]}]

    agent = make_agent("smolagents:scripted", guard_path=path, code_agent=code_agent)
    agent._model = ScriptedSmolModel(turn)  # type: ignore[attr-defined]
    return agent


def run_case(case: Case, agent: Agent, guard: str, audit: AuditLog,
             name: str) -> dict[str, Any]:
    return execute_case(case, agent, name, make_guard(guard), audit=audit, scorer=CaseScorer(case),
                        seed=0, run_id="parity", tracer_provider=None)


def _without_continue_turn(messages: list[Any]) -> list[Any]:
    """``messages`` without the user turns the LangChain middleware adds after a refusal
    (``continue_after_block``; tested in tests/adapters/test_langchain_feedback.py): the one
    deliberate difference between the middleware's conversation and the gateway's."""
    return [m for i, m in enumerate(messages)
            if not (getattr(m, "type", None) == "human" and i > 0
                    and getattr(messages[i - 1], "type", None) == "tool")]


def conversation(agent: Agent) -> list[tuple[str, str]]:
    """The last conversation the scripted model was shown: (role, text) per message, without the
    middleware's continue turns."""
    seen = _without_continue_turn(agent._model.seen[-1])  # type: ignore[attr-defined]
    return [(m["role"], str(m["content"])) if isinstance(m, dict)
            else (f"{m.type}:{getattr(m, 'status', '')}", m.text) for m in seen]


def score(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record["score"].items() if k != "agent"}


def received(audit: AuditLog, record: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    run = f"{record['agent']}/{record['guard']}"
    return [(c.tool, c.arguments) for c in audit.trajectory(run, record["case_id"]).calls]


def _compare(make: Any, paths: tuple[str, ...], guard: str) -> list[dict[str, Any]]:
    """Run every parity case on the gateway and on each adapter path; assert the records agree."""
    out = []
    with AuditLog(":memory:") as audit:
        for case in parity_cases():
            base_agent = make(case, "gateway")
            base = run_case(case, base_agent, guard, audit, "gw")
            assert base["result"]["error"] is None and base["result"]["final_answer"] == DONE
            for path in paths:
                agent = make(case, path)
                rec = run_case(case, agent, guard, audit, path)
                assert conversation(agent) == conversation(base_agent), (case.id, path)
                assert rec["result"]["error"] is None, (path, rec["result"])
                assert score(rec) == score(base), (case.id, path)
                assert rec["attempts"] == base["attempts"], (case.id, path)
                assert rec["s_task"] == base["s_task"]
                assert rec["disclosures"] == base["disclosures"]
                assert received(audit, rec) == received(audit, base)
                out.append(rec)
            out.append(base)
    return out


#: ``enforce:message`` — enforce with the refusal message alone — is what the gateway can do too;
#: ``enforce`` itself rewrites the blocked call in the agent's memory on the adapter paths that can
#: (issue 31), which the gateway cannot: tests/benchmark/test_enforce_feedback.py covers it.
GUARDS = ("audit", "enforce:message", "redact")


@needs_langchain
@pytest.mark.parametrize("guard", GUARDS)
def test_langchain_adapter_paths_score_as_the_gateway(guard: str) -> None:
    records = _compare(_langchain, ("middleware", "decorator"), guard)
    actions = {a["action"] for r in records for a in r["attempts"]}
    expected = {"audit": {"allow"}, "enforce:message": {"allow", "block"},
                "redact": {"allow", "block", "redact"}}[guard]
    assert actions == expected  # the leaks were really there, and really acted on


@needs_smolagents
@pytest.mark.parametrize("guard", GUARDS)
def test_smolagents_decorator_scores_as_the_gateway(guard: str) -> None:
    records = _compare(_smolagents, ("decorator",), guard)
    assert any(a["types"] for r in records for a in r["attempts"])


@needs_smolagents
def test_smolagents_instrumentor_scores_as_the_gateway_in_audit() -> None:
    records = _compare(_smolagents, ("instrumentor",), "audit")
    assert any(a["types"] for r in records for a in r["attempts"])


@needs_smolagents
def test_smolagents_code_agent_decorator_agrees() -> None:
    """CodeAgent calls tools from generated code (``type(tool).__call__``): same decisions."""
    with AuditLog(":memory:") as audit:
        case = parity_cases()[0]
        base = run_case(case, _smolagents(case, "gateway", code_agent=True), "redact", audit, "gw")
        rec = run_case(case, _smolagents(case, "decorator", code_agent=True), "redact", audit, "d")
    assert base["result"]["error"] is None and score(rec) == score(base)
    assert rec["attempts"] == base["attempts"]
