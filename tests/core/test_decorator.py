"""@purpose_bound on plain sync and async callables."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from tpguard import Guard, GuardViolation, PolicyKB, purpose_bound
from tpguard.testing import SpanCapture


@pytest.fixture
def policy(healthcare_policy_path: Path) -> PolicyKB:
    return PolicyKB.from_file(healthcare_policy_path)


def test_sync_preserves_identity_and_binds_positionals(policy: PolicyKB, tpguard_spans: SpanCapture) -> None:
    g = Guard(policy, mode="enforce", tracer_provider=tpguard_spans.provider)
    received: list[tuple[str, str]] = []

    @purpose_bound(purpose="hand the case to the pharmacy team", sink="handoff",
                   free_text=["summary"], guard=g)
    def team_handoff(case_id: str, summary: str = "") -> str:
        """Hand a case over."""
        received.append((case_id, summary))
        return "ok"

    assert team_handoff.__name__ == "team_handoff" and team_handoff.__doc__ == "Hand a case over."
    assert inspect.signature(team_handoff) == inspect.signature(team_handoff.__wrapped__)  # type: ignore[attr-defined]
    assert list(inspect.signature(team_handoff).parameters) == ["case_id", "summary"]
    assert team_handoff("C1", "RX-88213 ready for pickup") == "ok"
    with pytest.raises(GuardViolation) as info:
        team_handoff("C1", "Maria Gonzalez, 415 555 0199")  # positional: bound to `summary`
    assert "summary" in str(info.value) and "415" not in str(info.value)
    assert received == [("C1", "RX-88213 ready for pickup")]
    spans = tpguard_spans.tool_spans("team_handoff")
    assert [s.attributes["tpguard.decision"] for s in spans] == ["allow", "block"]  # type: ignore[index]
    spec = team_handoff.__tpguard_spec__  # type: ignore[attr-defined]
    assert spec.input_schema["properties"]["summary"]["type"] == "string"
    assert g.tool_spec("team_handoff").sink == "handoff"


def test_redact_passes_rewritten_arguments(policy: PolicyKB) -> None:
    g = Guard(policy, mode="redact")
    seen: list[str] = []

    @purpose_bound(purpose="hand over", sink="handoff", free_text=["summary"], guard=g, name="team_handoff")
    def handoff(summary: str) -> None:
        seen.append(summary)

    handoff(summary="Call Maria Gonzalez at 415-555-0199; RX-88213 is ready for pickup")
    assert seen == ["Call [PERSON_NAME_1] at [PHONE_1]; RX-88213 is ready for pickup"]


async def test_async_callable(policy: PolicyKB) -> None:
    g = Guard(policy, mode="enforce")

    @purpose_bound(purpose="hand over", sink="handoff", free_text=["summary"], guard=g, name="team_handoff",
                   on_block="return")
    async def handoff(summary: str) -> str:
        return f"sent: {summary}"

    assert inspect.iscoroutinefunction(handoff)
    assert await handoff("RX-88213 ready") == "sent: RX-88213 ready"
    out = await handoff("chest tightness")
    assert out.startswith("tpguard withheld this call to team_handoff") and "chest" not in out


def test_rejects_non_guard_and_non_callable(policy: PolicyKB) -> None:
    with pytest.raises(TypeError, match=r"takes a tpguard\.Guard"):
        purpose_bound(purpose="x", guard="nope")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="cannot wrap int"):
        purpose_bound(42, purpose="x", guard=Guard(policy))
