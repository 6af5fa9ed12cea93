"""What the gateway records when tpguard's adapter decides (issue 12, item 8): the adapter really
decides (the gateway delegated, nothing reached the backend undecided), blocked calls are attempts
with their types and fields and one error span each, redacted text is what the backend received,
baselines stay at the gateway, and the agent specs select the path."""

from __future__ import annotations

from importlib.util import find_spec
from typing import Any

import pytest
from test_adapter_path import _langchain, _smolagents, leaky_arguments, parity_cases, run_case
from test_agents_support import suite_cases

from tpguard.benchmark.agents import AGENT_SPECS, make_agent
from tpguard.benchmark.agents.base import guard_path_of
from tpguard.benchmark.agents.registry import check_guard_path
from tpguard.benchmark.backends import AuditLog, Environment
from tpguard.benchmark.cases.schema import Case
from tpguard.benchmark.guards import make_guard
from tpguard.benchmark.runner import Gateway
from tpguard.testing import SpanCapture

needs_langchain = pytest.mark.skipif(find_spec("langchain") is None, reason="langchain not installed")
needs_smolagents = pytest.mark.skipif(find_spec("smolagents") is None, reason="smolagents not installed")


def _gateway(case: Case, guard: str, audit: AuditLog, capture: SpanCapture | None = None) -> Gateway:
    env = Environment(case, audit, f"a/{guard}", agent="a", guard=guard)
    return Gateway(env, make_guard(guard).prepare(case), guard,
                   capture.provider if capture else None)


def _received(audit: AuditLog, case: Case, guard: str) -> list[tuple[str, dict[str, Any]]]:
    return [(c.tool, c.arguments) for c in audit.trajectory(f"a/{guard}", case.id).calls]


def _assert_redact_record(case: Case, gw: Gateway, audit: AuditLog) -> None:
    """Step 2 (structured leak) blocked then retried; the last step's free text redacted."""
    gt = case.ground_truth
    assert gw.unguarded == 0
    blocked = [a for a in gw.attempts if a.action == "block"]
    assert [a.tool for a in blocked] == [gt[1].tool]
    field = next(k for k, v in leaky_arguments(case, 1).items() if v != gt[1].arguments.get(k))
    assert blocked[0].fields == (field,) and blocked[0].types
    redacted = [a for a in gw.attempts if a.action == "redact"]
    slot = case.tool(gt[-1].tool).free_text[0]
    assert [(a.tool, a.fields) for a in redacted] == [(gt[-1].tool, (slot,))]
    assert len(gw.attempts) == len(gt) + 1  # one retry
    got = _received(audit, case, gw.guard_name)
    assert [t for t, _ in got] == [g.tool for g in gt]  # the blocked call never reached a backend
    text = got[-1][1][slot]
    forbidden = [a for a in case.atoms if not case.policy.is_authorized(a.id, gt[-1].tool)]
    assert "Context: [" in text and not any(a.value in text for a in forbidden)


@needs_langchain
@pytest.mark.parametrize("path", ["middleware", "decorator"])
def test_langchain_adapter_decides_and_the_gateway_records(path: str) -> None:
    case = parity_cases()[1]
    with AuditLog(":memory:") as audit:
        gw = _gateway(case, "redact", audit)
        result = _langchain(case, path).run(case, gw)
        assert result.error is None
        assert gw.guard_path == f"langchain-{path}" and gw.delegated
        _assert_redact_record(case, gw, audit)


@needs_smolagents
def test_smolagents_decorator_decides_and_the_gateway_records() -> None:
    case = parity_cases()[2]
    with AuditLog(":memory:") as audit:
        gw = _gateway(case, "redact", audit)
        assert _smolagents(case, "decorator").run(case, gw).error is None
        assert gw.guard_path == "smolagents-decorator"
        _assert_redact_record(case, gw, audit)


@needs_smolagents
def test_smolagents_instrumentor_observes_only_its_own_run() -> None:
    from smolagents.tools import Tool

    case = parity_cases()[3]
    original = Tool.__dict__["__call__"]
    with AuditLog(":memory:") as audit:
        gw = _gateway(case, "audit", audit)
        assert _smolagents(case, "instrumentor").run(case, gw).error is None
        assert gw.guard_path == "smolagents-instrumentor" and gw.unguarded == 0
        assert Tool.__dict__["__call__"] is original  # uninstrumented after the run
        assert {a.action for a in gw.attempts} == {"allow"} and any(a.types for a in gw.attempts)
        # enforce cannot act through an audit-only instrumentor: the case ends with a clear error
        gw = _gateway(case, "enforce", audit)
        assert _smolagents(case, "instrumentor").run(case, gw).error == "GuardPathError"
    with pytest.raises(ValueError, match="audit"):
        check_guard_path(make_agent("smolagents+instrumentor:m"), "enforce")
    check_guard_path(make_agent("smolagents+instrumentor:m"), "presidio-redact")


@needs_langchain
def test_one_span_per_attempt_under_the_agent_span(tpguard_spans: SpanCapture) -> None:
    case = parity_cases()[0]
    with AuditLog(":memory:") as audit:
        rec = execute_case_with_spans(case, "enforce", audit, tpguard_spans)
    spans = tpguard_spans.tool_spans()
    assert len(spans) == len(rec["attempts"])  # the adapter's own spans are not exported
    decisions = [(s.attributes or {})["tpguard.decision"] for s in spans]
    assert decisions == [a["action"] for a in rec["attempts"]] and "block" in decisions
    assert {(s.attributes or {})["tpguard.benchmark.guard_path"] for s in spans} == {
        "langchain-middleware"}
    root = next(s for s in tpguard_spans.spans if s.name.startswith("invoke_agent"))
    assert all(s.parent is not None and s.parent.span_id == root.context.span_id for s in spans)
    dump = tpguard_spans.dump()
    assert not any(a.value in dump for a in case.atoms if len(a.value) > 6)


def execute_case_with_spans(case: Case, guard: str, audit: AuditLog,
                            capture: SpanCapture) -> dict[str, Any]:
    from tpguard.benchmark.metrics import CaseScorer
    from tpguard.benchmark.runner._execute import execute_case

    return execute_case(case, _langchain(case, "middleware"), "lc", make_guard(guard),
                        audit=audit, scorer=CaseScorer(case), seed=0, run_id="r",
                        tracer_provider=capture.provider)


@needs_langchain
@pytest.mark.parametrize("guard", ["off", "presidio-redact"])
def test_baselines_stay_at_the_gateway_on_an_adapter_path(guard: str) -> None:
    case = parity_cases()[4]
    with AuditLog(":memory:") as audit:
        gw = _gateway(case, guard, audit)
        assert _langchain(case, "decorator").run(case, gw).error is None
        assert gw.guard_path == "gateway" and not gw.delegated
        base = run_case(case, _langchain(case, "gateway"), guard, audit, "g")
        adapter = run_case(case, _langchain(case, "decorator"), guard, audit, "d")
    assert base["attempts"] == adapter["attempts"]
    if guard == "presidio-redact":
        assert any(a["action"] == "rewrite" for a in adapter["attempts"])


def test_a_call_the_adapter_did_not_see_is_counted() -> None:
    case = suite_cases()[0]
    with AuditLog(":memory:") as audit:
        gw = _gateway(case, "enforce", audit)
        assert gw.delegate("langchain-decorator") is not None
        gt = case.ground_truth[0]
        assert gw.call(gt.tool, dict(gt.arguments)).ok  # straight to the gateway: no adapter
    assert gw.unguarded == 1 and [a.action for a in gw.attempts] == ["unguarded"]


def test_agent_specs_select_the_guard_path() -> None:
    expect = {
        ("langchain:m", None): "langchain-decorator",
        ("langchain:m", "adapter"): "langchain-decorator",
        ("langchain:m", "gateway"): "gateway",
        ("langchain+middleware:openai:gpt-4.1-mini", "gateway"): "langchain-middleware",
        ("langchain+gateway:m", None): "gateway",
        ("smolagents:m", None): "smolagents-decorator",
        ("smolagents+instrumentor:m", None): "smolagents-instrumentor",
        ("smolagents:m", "gateway"): "gateway",
        ("oracle", "middleware"): "gateway",
        ("leaky", "adapter"): "gateway",
    }
    for (spec, option), path in expect.items():
        agent = make_agent(spec, guard_path=option)
        assert guard_path_of(agent) == path, spec
    assert make_agent("langchain+middleware:openai:x").name == "langchain:openai:x"
    for bad, msg in [("smolagents+middleware:m", "no guard path 'middleware'"),
                     ("oracle+decorator", "only langchain and smolagents"),
                     ("langchain+nope:m", "no guard path 'nope'")]:
        with pytest.raises(ValueError, match=msg) as info:
            make_agent(bad)
        assert all(s in str(info.value) for s in AGENT_SPECS)


@needs_langchain
@pytest.mark.parametrize("path", ["gateway", "middleware", "decorator"])
def test_parallel_tool_calls_in_one_turn_each_get_their_own_decision(path: str) -> None:
    """LangChain runs one turn's tool calls on worker threads: every call that reaches the
    gateway carries its own adapter decision (none unguarded), and the attempts are the same."""
    from tpguard.testing.langchain import ScriptedChatModel

    case = suite_cases()[0]
    atom = next(a for a in case.atoms if not any(x.atom == a.id for x in case.policy.authorizations))
    calls = [{"name": g.tool, "args": {**g.arguments, **({"note": atom.value} if i % 2 else {})}}
             for i, g in enumerate(case.ground_truth[:4])]
    with AuditLog(":memory:") as audit:
        gw = _gateway(case, "redact", audit)
        agent = make_agent("langchain:x", guard_path=path)
        agent._model = ScriptedChatModel(turns=[calls, "done"])  # type: ignore[attr-defined]
        assert agent.run(case, gw).error is None
        got = _received(audit, case, "redact")
    assert gw.unguarded == 0
    assert sorted((a.tool, a.action) for a in gw.attempts) == sorted(
        [(c["name"], "allow") for c in calls[0::2]]
        + [(calls[1]["name"], "redact"), (calls[3]["name"], "block")])  # note: free text / not
    assert len(got) == 3 and not any(atom.value in str(args) for _, args in got)
