"""Guards under comparison and the gateway every agent goes through."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tpguard.benchmark.backends import AuditLog, Environment
from tpguard.benchmark.cases.need_to_know import generate
from tpguard.benchmark.cases.schema import Case
from tpguard.benchmark.guards import GUARD_NAMES, deployment_policy, make_guard
from tpguard.benchmark.runner import Gateway, tool_views
from tpguard.testing import SpanCapture


@pytest.fixture(scope="module")
def case() -> Case:
    suite = generate(seed=0, n_cases=23)
    return next(c for c in suite.cases if c.domain == "Medical")


def _handoff(case: Case) -> tuple[str, dict[str, Any]]:
    gt = next(g for g in case.ground_truth if case.tool(g.tool).sink == "handoff")
    return gt.tool, dict(gt.arguments)


def _leak(case: Case, args: dict[str, Any], tool: str) -> tuple[dict[str, Any], list[str]]:
    """Put every atom forbidden for ``tool`` into its first free-text slot."""
    forbidden = [a for a in case.atoms if not case.policy.is_authorized(a.id, tool)]
    slot = case.tool(tool).free_text[0]
    leaked = dict(args)
    leaked[slot] = (leaked.get(slot) or "") + " Context: " + "; ".join(a.value for a in forbidden)
    return leaked, [a.value for a in forbidden]


def gateway(case: Case, name: str, capture: SpanCapture | None = None) -> tuple[Gateway, AuditLog]:
    audit = AuditLog(":memory:")
    env = Environment(case, audit, f"t/{name}", agent="t", guard=name)
    provider = capture.provider if capture else None
    return Gateway(env, make_guard(name).prepare(case), name, provider), audit


def received(audit: AuditLog, name: str, case: Case) -> list[dict[str, Any]]:
    return [c.arguments for c in audit.trajectory(f"t/{name}", case.id).calls]


def test_guard_registry() -> None:
    assert {make_guard(n).name for n in GUARD_NAMES} == set(GUARD_NAMES)
    with pytest.raises(ValueError, match="unknown guard 'nope'"):
        make_guard("nope")


def test_deployment_policy_hides_semantic_variants(case: Case) -> None:
    assert any(a.variants for a in case.atoms)
    assert not any(a.variants for a in deployment_policy(case).atoms)
    assert deployment_policy(case, knows_variants=True) == case.policy


def test_off_passes_and_tpguard_modes_act(case: Case) -> None:
    tool, args = _handoff(case)
    leaked, values = _leak(case, args, tool)
    slot = case.tool(tool).free_text[0]
    gw, audit = gateway(case, "off")
    assert gw.call(tool, leaked).ok and received(audit, "off", case)[-1][slot] == leaked[slot]

    gw, audit = gateway(case, "enforce")
    obs = gw.call(tool, leaked)
    assert not obs.ok and obs.blocked and "tpguard withheld" in obs.content
    assert not received(audit, "enforce", case)  # a blocked call never reaches the backend
    assert not any(v in obs.content for v in values)
    assert gw.call(tool, args).ok and gw.blocked == 1

    gw, audit = gateway(case, "redact")
    obs = gw.call(tool, leaked)
    assert obs.ok and obs.rewritten
    got = received(audit, "redact", case)[-1][slot]
    assert "Context:" in got and not any(v in got for v in values)


def test_baselines(case: Case) -> None:
    tool, args = _handoff(case)
    leaked, _ = _leak(case, args, tool)
    slot = case.tool(tool).free_text[0]
    gw, audit = gateway(case, "drop-free-text")
    assert gw.call(tool, leaked).ok and received(audit, "drop-free-text", case)[-1][slot] == ""

    text = {"summary": "write to jane.roe@example.org or call 415-555-0199 from 10.0.0.7"}
    lc = make_guard("langchain-pii").prepare(case).process(case.tool(tool), text)
    assert lc.action == "rewrite" and "[REDACTED_EMAIL]" in lc.arguments["summary"]
    assert "415-555-0199" in lc.arguments["summary"] and "[REDACTED_IP]" in lc.arguments["summary"]
    pr = make_guard("presidio-redact").prepare(case).process(case.tool(tool), text)
    assert pr.action == "rewrite" and "<EMAIL_ADDRESS>" in pr.arguments["summary"]
    assert "415-555-0199" not in pr.arguments["summary"] and set(pr.types) >= {"EMAIL_ADDRESS"}


def test_gateway_views_hide_the_policy(case: Case) -> None:
    views = tool_views(case)
    assert [v.name for v in views] == [t.name for t in case.tools]
    dumped = json.dumps([v.input_schema for v in views]) + " ".join(v.description for v in views)
    assert "authoriz" not in dumped.lower() and "forbidden" not in dumped.lower()


def test_gateway_rejects_bad_calls_without_raising(case: Case) -> None:
    gw, audit = gateway(case, "off")
    assert not gw.call("no_such_tool", {}).ok
    assert not gw.call(case.tools[0].name, "not a dict").ok  # type: ignore[arg-type]
    obs = gw.call(case.tools[0].name, {})
    assert not obs.ok and not obs.blocked
    assert [c.outcome for c in audit.trajectory("t/off", case.id).calls] == ["error"]


def test_gateway_spans_carry_decisions_not_values(case: Case, tpguard_spans: SpanCapture) -> None:
    tool, args = _handoff(case)
    leaked, values = _leak(case, args, tool)
    gw, _ = gateway(case, "enforce", tpguard_spans)
    gw.call(tool, leaked)
    gw.call(tool, args)
    blocked, allowed = tpguard_spans.tool_spans(tool)
    assert (blocked.attributes or {})["tpguard.decision"] == "block"
    assert (blocked.attributes or {})["tpguard.benchmark.guard"] == "enforce"
    assert blocked.status.status_code.name == "ERROR"
    assert (allowed.attributes or {})["tpguard.decision"] == "allow"
    dump = tpguard_spans.dump()
    assert [v for v in values if v in dump] == []
