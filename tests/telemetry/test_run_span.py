"""``agent_run_span``: one ``invoke_agent`` root per run/case, guard spans as ordered children."""

from __future__ import annotations

import pytest

from tpguard import Guard, PolicyKB
from tpguard.telemetry import _attributes as A
from tpguard.telemetry import agent_run_span
from tpguard.testing import capture_spans


def test_tool_spans_are_children_of_the_run_span_in_call_order(healthcare: PolicyKB) -> None:
    tools = ["register_patient", "process_payment", "issue_prescription", "notify_patient"]
    with capture_spans() as cap:
        guard = Guard(healthcare, mode="enforce", tracer_provider=cap.provider)
        for case in ("case-a", "case-b"):
            with agent_run_span(cap.provider, "care-agent", run_id="run-1", case_id=case):
                for tool in tools:
                    with guard.intercept(tool, {"patient": "Maria Gonzalez"}):
                        pass
        roots = [s for s in cap.spans if s.parent is None]
        assert [r.name for r in roots] == ["invoke_agent care-agent"] * 2
        for root, case in zip(roots, ("case-a", "case-b"), strict=True):
            attrs = dict(root.attributes or {})
            assert attrs[A.GEN_AI_OPERATION_NAME] == "invoke_agent"
            assert attrs[A.GEN_AI_AGENT_NAME] == "care-agent"
            assert attrs[A.OPENINFERENCE_SPAN_KIND] == "AGENT"
            assert attrs[A.TPGUARD_RUN_ID] == "run-1"
            assert attrs[A.TPGUARD_CASE_ID] == attrs[A.OPENINFERENCE_SESSION_ID] == case
            children = sorted((s for s in cap.spans if s.parent is not None
                               and s.parent.span_id == root.context.span_id),
                              key=lambda s: s.start_time or 0)
            assert [c.name for c in children] == [f"execute_tool {t}" for t in tools]
            assert {c.context.trace_id for c in children} == {root.context.trace_id}
            assert root.start_time <= children[0].start_time  # type: ignore[operator]
            assert children[-1].end_time <= root.end_time  # type: ignore[operator]
        assert roots[0].context.trace_id != roots[1].context.trace_id  # one trace per case


def test_a_failing_run_records_the_error_type_only() -> None:
    with capture_spans() as cap:
        with pytest.raises(RuntimeError), agent_run_span(cap.provider, "agent"):
            raise RuntimeError("patient Maria Gonzalez, 415-555-0199")
        (root,) = cap.spans
        assert root.status.status_code.name == "ERROR"
        assert dict(root.attributes or {})[A.ERROR_TYPE] == "RuntimeError"
        assert root.events == ()  # no exception event: its message could carry values
        assert "Maria" not in cap.dump() and "0199" not in cap.dump()
