"""Guard modes, messages, placeholders, sessions, fail-closed/open."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from tpguard import Guard, PolicyKB, PrivateAtom
from tpguard.detect.detector import Detector

SUMMARY = "Maria Gonzalez (415-555-0199) reports chest tightness; RX-88213 is ready for pickup."


@pytest.fixture
def policy(healthcare_policy_path: Path) -> PolicyKB:
    return PolicyKB.from_file(healthcare_policy_path)


def test_audit_records_and_changes_nothing(policy: PolicyKB) -> None:
    d = Guard(policy, mode="audit").check("team_handoff", {"summary": SUMMARY})
    assert d.action == "allow" and d.arguments == {"summary": SUMMARY}
    assert {f.atom_id for f in d.forbidden} == {"name", "phone", "symptom"}
    assert {f.atom_id for f in d.findings} == {"name", "phone", "symptom", "pickup_id", "status"}


def test_enforce_blocks_and_names_types_and_fields_not_values(policy: PolicyKB) -> None:
    d = Guard(policy, mode="enforce").check("team_handoff", {"case_id": "C1", "summary": SUMMARY})
    assert d.blocked and d.message
    assert "medical" in d.message and "phone" in d.message and "person_name" in d.message
    assert "summary" in d.message
    for value in ("Maria", "415", "0199", "chest", "tightness"):
        assert value not in d.message and value not in repr(d)


def test_enforce_allows_authorized_only_calls(policy: PolicyKB) -> None:
    d = Guard(policy, mode="enforce").check("notify_patient", {"phone": "415-555-0199",
                                                               "message": "RX-88213 ready"})
    assert d.action == "allow" and not d.forbidden and len(d.findings) == 2


def test_redact_rewrites_free_text_keeps_rest(policy: PolicyKB) -> None:
    g = Guard(policy, mode="redact")
    d = g.check("team_handoff", {"case_id": "C1", "summary": SUMMARY})
    assert d.action == "redact"
    s = d.arguments["summary"]
    assert s == "[PERSON_NAME_1] ([PHONE_1]) reports [MEDICAL_1]; RX-88213 is ready for pickup."
    assert d.arguments["case_id"] == "C1"


def test_redact_blocks_forbidden_structured_fields(policy: PolicyKB) -> None:
    d = Guard(policy, mode="redact").check("team_handoff", {"contact": "415-555-0199", "summary": "ok"})
    assert d.blocked and "contact" in (d.message or "")


def test_placeholders_stable_within_session_and_isolated_across(policy: PolicyKB) -> None:
    g = Guard(policy, mode="redact")
    with g.session(session_id="s1"):
        a = g.check("team_handoff", {"summary": "call 415-555-0199"}).arguments["summary"]
        b = g.check("team_handoff", {"summary": "symptom: chest tightness; (415) 555 0199"}).arguments
    assert a == "call [PHONE_1]"
    assert b["summary"] == "symptom: [MEDICAL_1]; [PHONE_1]"
    with g.session(session_id="s2"):
        c = g.check("team_handoff", {"summary": "chest tightness"}).arguments["summary"]
    assert c == "[MEDICAL_1]"


def test_session_atoms_and_register(policy: PolicyKB) -> None:
    g = Guard(policy, mode="enforce")
    ssn = PrivateAtom(id="ssn", type="national_id", value="078-05-1120")
    assert g.check("team_handoff", {"summary": "SSN 078-05-1120"}).action == "allow"
    with g.session(atoms=[ssn]) as s:
        assert g.check("team_handoff", {"summary": "SSN 078-05-1120"}).blocked
        email = PrivateAtom(id="email", type="email", value="maria@example.org")
        g.register(email)
        assert g.check("team_handoff", {"summary": "mail maria@example.org"}).blocked
        assert {a.id for a in s.atoms} >= {"ssn", "email"}
    assert g.check("team_handoff", {"summary": "SSN 078-05-1120"}).action == "allow"


def test_sessions_isolated_across_threads(policy: PolicyKB) -> None:
    g = Guard(policy, mode="enforce")
    results: dict[str, bool] = {}
    barrier = threading.Barrier(2)

    def worker(name: str, value: str) -> None:
        atom = PrivateAtom(id=name, type="secret", value=value)
        with g.session(atoms=[atom]):
            barrier.wait()
            mine = g.check("team_handoff", {"summary": value}).blocked
            other = "tok-BBBB-2222" if name == "a" else "tok-AAAA-1111"
            theirs = g.check("team_handoff", {"summary": other}).blocked
            results[name] = mine and not theirs

    threads = [threading.Thread(target=worker, args=("a", "tok-AAAA-1111")),
               threading.Thread(target=worker, args=("b", "tok-BBBB-2222"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {"a": True, "b": True}


async def test_sessions_isolated_across_asyncio_tasks(policy: PolicyKB) -> None:
    g = Guard(policy, mode="redact")

    async def task(secret: str, other: str) -> tuple[str, str]:
        with g.session(atoms=[PrivateAtom(id="s", type="secret", value=secret)]):
            await asyncio.sleep(0.01)
            a = g.check("team_handoff", {"summary": f"x {secret}"}).arguments["summary"]
            await asyncio.sleep(0.01)
            b = g.check("team_handoff", {"summary": f"x {other}"}).arguments["summary"]
            return a, b

    r1, r2 = await asyncio.gather(task("alpha-77", "bravo-88"), task("bravo-88", "alpha-77"))
    assert r1 == ("x [SECRET_1]", "x bravo-88") and r2 == ("x [SECRET_1]", "x alpha-77")


def test_unknown_tool_is_external_and_forbidden(policy: PolicyKB) -> None:
    d = Guard(policy, mode="enforce").check("post_to_slack", {"text": "Maria Gonzalez"})
    assert d.blocked and Guard(policy).tool_spec("post_to_slack").sink == "external"


def _broken(self: Detector, text: str, **_: object) -> list:
    raise KeyError("415-555-0199")  # an internal error whose message holds a value


@pytest.mark.parametrize(("mode", "action"), [("audit", "allow"), ("enforce", "block"), ("redact", "block")])
def test_internal_errors_fail_closed_or_open_and_never_leak(
    policy: PolicyKB, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
    mode: str, action: str,
) -> None:
    monkeypatch.setattr(Detector, "scan_text", _broken)
    d = Guard(policy, mode=mode).check("team_handoff", {"summary": SUMMARY})  # type: ignore[arg-type]
    assert d.action == action and d.error == "KeyError"
    assert "415" not in (d.message or "") and "415" not in caplog.text
    assert "KeyError" in caplog.text


def test_bad_mode_is_a_clear_error(policy: PolicyKB) -> None:
    with pytest.raises(ValueError, match="mode must be one of audit, enforce, redact"):
        Guard(policy, mode="block")  # type: ignore[arg-type]


def test_policy_path_accepted(healthcare_policy_path: Path) -> None:
    assert len(Guard(healthcare_policy_path).policy.atoms) == 7


def test_mode_override_per_call(policy: PolicyKB) -> None:
    g = Guard(policy, mode="enforce")
    d = g.check("team_handoff", {"summary": SUMMARY}, mode="audit")
    assert d.action == "allow" and d.mode == "audit" and d.forbidden
    assert g.check("team_handoff", {"summary": SUMMARY}).blocked


def test_a_decision_is_a_frozen_dataclass_whose_init_sets_every_field_in_order() -> None:
    import dataclasses
    import inspect

    from tpguard import Decision

    names = [f.name for f in dataclasses.fields(Decision)]
    params = inspect.signature(Decision.__init__).parameters
    assert list(params)[1:] == names  # the hand-written __init__ (one setter per field) is complete
    assert [p.default for p in list(params.values())[1:]] == [
        inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default
        for f in dataclasses.fields(Decision)]
    values = [f"v{i}" for i in range(len(names))]
    d = Decision(*values)
    assert [getattr(d, n) for n in names] == values
    assert dataclasses.replace(d, action="allow").action == "allow" and d.action == "v2"
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.action = "allow"  # type: ignore[misc]
