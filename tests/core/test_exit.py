"""The exit stage (issue 11; ASLEval, seed ``002_*`` §3): ``Auth(r, e)`` resolution, each mode at
a visible exit, structured payloads, internal channels, tools whose call is an exit, spans and
limits."""

from __future__ import annotations

from pathlib import Path

import pytest

from tpguard import Disclosure, Guard, Limits, PolicyKB, PrivateAtom, Recipient
from tpguard.policy.exposure import VISIBLE_EXITS, Exposure
from tpguard.testing import SpanCapture

ATOMS = [
    {"id": "ann.name", "type": "person_name", "value": "Ann Lee"},
    {"id": "ann.dx", "type": "diagnosis", "value": "asthma"},
    {"id": "bob.name", "type": "person_name", "value": "Bob Ray"},
    {"id": "bob.dx", "type": "diagnosis", "value": "hepatitis B"},
]
VALUES = ("Ann Lee", "asthma", "Bob Ray", "hepatitis B")
POLICY = {
    "atoms": ATOMS,
    "recipients": [{"id": "requester", "kind": "requester"},
                   {"id": "ext:vendor", "kind": "external", "addresses": ["ops@vendor.example"]}],
    "disclosures": [{"atom": "ann.name", "recipient": "requester", "allow": True},
                    {"atom": "ann.dx", "recipient": "requester", "allow": True}],
}
TEXT = "Ann Lee has asthma. Bob Ray has hepatitis B."


def guard(mode: str = "enforce", policy: dict | None = None, **kw: object) -> Guard:
    return Guard(PolicyKB.from_dict(policy or POLICY), mode=mode, **kw)  # type: ignore[arg-type]


# -- Auth(r, e) --------------------------------------------------------------------------------
def test_auth_resolves_most_specific_first_and_defaults_to_forbidden() -> None:
    ex = Exposure(
        [Recipient(id="req", kind="requester"), Recipient(id="ext:a", kind="external"),
         Recipient(id="ext:b", kind="external")],
        [Disclosure(atom="a1", recipient="ext:a", allow=False),       # (atom, recipient)
         Disclosure(atom="a1", recipient_kind="external", allow=True),  # (atom, kind)
         Disclosure(atom_type="phone", recipient="ext:a", allow=True),  # (type, recipient)
         Disclosure(atom_type="phone", recipient_kind="external", allow=False),  # (type, kind)
         Disclosure(atom_type="*", recipient="req", allow=True),        # (*, recipient)
         Disclosure(atom_type="*", recipient_kind="external", allow=False)])  # (*, kind)
    req, a, b = ex.resolve("req"), ex.resolve("ext:a"), ex.resolve("ext:b")
    assert ex.auth("a1", "phone", a) is False  # the pair beats the type rule for ext:a
    assert ex.auth("a1", "phone", b) is True   # (atom, kind) beats (type, kind)
    assert ex.auth("a2", "phone", a) is True and ex.auth("a2", "phone", b) is False
    assert ex.auth("a2", "ssn", req) is True and ex.auth("a2", "ssn", b) is False
    assert Exposure().auth("a2", "ssn", Exposure().resolve("requester")) is False  # default
    # unregistered PII is forbidden only by a rule
    assert Exposure().auth("pii:email", "email", Exposure().resolve("x@y.example"), registered=False)


def test_recipients_resolve_by_id_or_address_and_an_undeclared_one_is_external() -> None:
    ex = Exposure([Recipient(id="ext:vendor", addresses=("Ops@Vendor.example",))],
                  [Disclosure(atom_type="*", recipient_kind="external", allow=True)])
    assert ex.resolve("ops@vendor.example").id == "ext:vendor"
    stranger = ex.resolve("someone@else.example")
    assert (stranger.id, stranger.kind) == ("undeclared", "external")
    assert ex.auth("a", "t", stranger) is True  # kind rules apply to undeclared recipients
    assert ex.requester() == "requester"  # an implicit requester when none is declared
    assert ex.is_exit("final_response") and ex.is_exit("slack") and not ex.is_exit("raw_return")
    assert Exposure(exits=["raw_return"]).is_exit("raw_return")  # declared visible wins
    assert Exposure().exits == VISIBLE_EXITS


def test_disclosure_names_exactly_one_atom_and_one_recipient() -> None:
    with pytest.raises(ValueError, match="exactly one of 'atom'"):
        Disclosure(atom="a", atom_type="t", recipient="r", allow=True)
    with pytest.raises(ValueError, match="exactly one of 'recipient'"):
        Disclosure(atom="a", allow=True)
    pairs = Disclosure.allow_atoms("r", [PrivateAtom(id="x", type="t", value="vvvv"), "y"])
    assert [(d.atom, d.recipient, d.allow) for d in pairs] == [("x", "r", True), ("y", "r", True)]


# -- modes at a visible exit ---------------------------------------------------------------------
def test_audit_records_and_changes_nothing() -> None:
    d = guard("audit").check_exit("final_response", None, TEXT)
    assert (d.stage, d.action, d.payload, d.message) == ("exit", "allow", TEXT, None)
    assert sorted(f.atom_id for f in d.forbidden) == ["bob.dx", "bob.name"]
    assert {f.atom_id for f in d.findings} == {"ann.name", "ann.dx", "bob.name", "bob.dx"}
    assert [r.id for r in d.recipients] == ["requester"] and d.visible is True


def test_enforce_withholds_with_a_value_free_message() -> None:
    d = guard("enforce").check_exit("final_response", "requester", TEXT)
    assert d.blocked and d.payload == TEXT  # the payload is what was withheld
    assert d.message == ("tpguard withheld this final response to requester: it carried diagnosis, "
                         "person_name, which requester may not receive.")
    assert not [v for v in VALUES if v in d.message + repr(d)]


def test_redact_replaces_only_what_the_recipient_may_not_receive() -> None:
    d = guard("redact").check_exit("final_response", None, TEXT)
    assert d.redacted and d.payload == "Ann Lee has asthma. [PERSON_NAME_1] has [DIAGNOSIS_1]."
    assert d.message == "tpguard replaced diagnosis, person_name with placeholders in this final response to requester."


def test_an_authorized_payload_passes_in_every_mode() -> None:
    for mode in ("audit", "enforce", "redact"):
        d = guard(mode).check_exit("final_response", None, "Ann Lee has asthma.")
        assert d.action == "allow" and d.payload == "Ann Lee has asthma." and not d.forbidden


def test_the_same_payload_to_another_recipient_is_decided_for_that_recipient() -> None:
    d = guard("redact").check_exit("email", "ops@vendor.example", "Ann Lee has asthma.")
    assert d.payload == "[PERSON_NAME_1] has [DIAGNOSIS_1]." and [r.id for r in d.recipients] == ["ext:vendor"]
    several = guard("enforce").check_exit("email", ["requester", "ops@vendor.example"], "Ann Lee")
    assert several.blocked and "ext:vendor, requester" in str(several.message)


def test_dict_payloads_an_email_with_an_atom_in_a_key() -> None:
    mail = {"to": "ops@vendor.example", "subject": "Bob Ray", "body": TEXT, "extra": {"Bob Ray": 1}}
    d = guard("redact").check_exit("email", "requester", mail)
    assert d.payload == {"to": "ops@vendor.example", "subject": "[PERSON_NAME_1]",
                         "body": "Ann Lee has asthma. [PERSON_NAME_1] has [DIAGNOSIS_1].",
                         "extra": {"[PERSON_NAME_1]": 1}}
    assert mail["subject"] == "Bob Ray"  # the caller's payload is not modified
    paths = {f.path for f in d.forbidden}
    assert paths == {"subject", "body", "extra.[PERSON_NAME_1]"}
    assert not [v for v in VALUES if v in repr(d.to_dict())]


def test_internal_channels_are_recorded_never_blocked_or_rewritten() -> None:
    for mode in ("enforce", "redact"):
        for channel in ("tool_arguments", "raw_return"):
            d = guard(mode).check_exit(channel, None, TEXT)
            assert d.action == "allow" and d.payload == TEXT and d.visible is False
            assert sorted(f.atom_id for f in d.forbidden) == ["bob.dx", "bob.name"]


def test_policy_internal_channels_and_exits_are_declarable() -> None:
    g = guard(policy={**POLICY, "internal_channels": ["debug_log"], "exits": ["final_response"]})
    assert not g.check_exit("debug_log", None, TEXT).blocked
    assert g.check_exit("raw_return", None, TEXT).blocked  # no longer declared internal


# -- sessions --------------------------------------------------------------------------------------
def test_session_binds_its_requester_and_disclosures() -> None:
    g = guard("redact", policy={"atoms": ATOMS})
    with g.session(recipients=[{"id": "patient:P-2", "kind": "requester"}],
                   disclosures=Disclosure.allow_atoms("patient:P-2", ["bob.name", "bob.dx"])):
        assert g.requester() == "patient:P-2"
        d = g.check_exit("final_response", None, TEXT)
        assert d.payload == "[PERSON_NAME_1] has [DIAGNOSIS_1]. Bob Ray has hepatitis B."
        with g.session(disclosures=[{"atom_type": "*", "recipient": "patient:P-2", "allow": True}]):
            assert g.check_exit("final_response", None, TEXT).action == "allow"  # inner sees outer
    assert g.requester() == "requester"
    assert g.check_exit("final_response", None, "Bob Ray").redacted  # default: forbidden


def test_a_session_atom_and_a_tainted_one_are_forbidden_by_default() -> None:
    g = guard("enforce", policy={"recipients": [{"id": "requester", "kind": "requester"}]})
    with g.session([PrivateAtom(id="s.ssn", type="ssn", value="123-45-6789")]):
        assert g.check_exit("console", None, "ssn 123-45-6789").blocked
        with g.session(disclosures=[{"atom_type": "ssn", "recipient_kind": "requester", "allow": True}]):
            assert not g.check_exit("console", None, "ssn 123-45-6789").blocked


# -- a tool whose call is an exit --------------------------------------------------------------------
MAIL_POLICY = {**POLICY,
               "tools": [{"name": "send_email", "purpose": "write to a contact", "sink": "email",
                          "free_text": ["subject", "body"], "exit": {"channel": "email", "recipient_arg": "to"}}],
               "rules": [{"atom_type": "diagnosis", "sink": "email", "allow": True},
                         {"atom_type": "person_name", "sink": "email", "allow": True}],
               "disclosures": [*POLICY["disclosures"],
                               {"atom": "ann.name", "recipient": "ext:vendor", "allow": True}]}


def test_enforce_blocks_sending_an_atom_to_a_recipient_who_may_not_receive_it() -> None:
    g = guard("enforce", MAIL_POLICY)
    ok = g.check("send_email", {"to": "ops@vendor.example", "subject": "Ann Lee", "body": "hello"})
    assert ok.action == "allow" and ok.exit is not None and ok.exit.action == "allow"
    d = g.check("send_email", {"to": "ops@vendor.example", "subject": "x", "body": "Ann Lee has asthma."})
    assert d.blocked and d.exit is not None and [f.atom_id for f in d.exit.forbidden] == ["ann.dx"]
    assert d.message == ("tpguard withheld this call to send_email (email to ext:vendor): it carried "
                         "diagnosis, which ext:vendor may not receive. Call send_email again without them.")
    assert g.check("send_email", {"to": "requester", "subject": "x", "body": "Ann Lee has asthma."}).allowed
    stranger = g.check("send_email", {"to": ["requester", "x@elsewhere.example"], "body": "Ann Lee"})
    assert stranger.blocked and "an undeclared recipient" in str(stranger.message)
    assert "elsewhere" not in str(stranger.message)


def test_redact_rewrites_the_mail_but_not_its_recipient() -> None:
    g = guard("redact", MAIL_POLICY)
    d = g.check("send_email", {"to": "ops@vendor.example", "subject": "Ann Lee", "body": "Ann Lee has asthma."})
    assert d.redacted and d.arguments == {"to": "ops@vendor.example", "subject": "Ann Lee",
                                          "body": "Ann Lee has [DIAGNOSIS_1]."}
    audit = guard("audit", MAIL_POLICY).check("send_email", {"to": "ops@vendor.example", "body": "asthma"})
    assert audit.allowed and audit.exit is not None and audit.exit.forbidden


# -- spans and limits --------------------------------------------------------------------------------
def test_one_exit_span_per_check_with_value_free_attributes(tpguard_spans: SpanCapture) -> None:
    g = guard("enforce", tracer_provider=tpguard_spans.provider)
    with g.session(session_id="s-1"):
        g.check_exit("final_response", None, {"answer": TEXT, "Bob Ray": "key"})
    (span,) = [s for s in tpguard_spans.spans if s.name == "exit final_response"]
    a = span.attributes
    assert a["tpguard.exit.channel"] == "final_response" and a["tpguard.exit.visible"] is True
    assert a["tpguard.exit.decision"] == "block" and a["tpguard.exit.mode"] == "enforce"
    assert list(a["tpguard.exit.recipients"]) == ["requester"]
    assert list(a["tpguard.exit.recipient_kinds"]) == ["requester"]
    assert list(a["tpguard.exit.forbidden.atom_ids"]) == ["bob.dx", "bob.name"]
    assert a["tpguard.exit.finding.count"] == 5 and a["tpguard.session.id"] == "s-1"
    assert "[PERSON_NAME_1]" in list(a["tpguard.exit.fields"])
    assert span.status.status_code.name == "ERROR"
    assert not [v for v in VALUES if v in tpguard_spans.dump()]


def test_a_tool_exit_is_recorded_on_the_tool_span(tpguard_spans: SpanCapture) -> None:
    g = guard("enforce", MAIL_POLICY, tracer_provider=tpguard_spans.provider)
    with g.intercept("send_email", {"to": "ops@vendor.example", "body": "asthma"}) as call:
        assert call.decision.blocked
    (span,) = tpguard_spans.tool_spans("send_email")
    assert span.attributes["tpguard.exit.decision"] == "block"
    assert list(span.attributes["tpguard.exit.recipients"]) == ["ext:vendor"]
    assert "asthma" not in tpguard_spans.dump()


def test_a_long_multiline_answer_is_read_whole() -> None:
    filler = "\n".join(f"Line {i}: nothing private here." for i in range(20_000))
    text = f"{filler}\nAnn Lee has asthma.\n{filler}\nBob Ray has hepatitis B.\n"
    d = guard("redact").check_exit("final_response", None, text)
    assert d.redacted and d.payload.count("[DIAGNOSIS_1]") == 1 and "hepatitis B" not in d.payload
    assert d.payload.startswith("Line 0") and "Ann Lee has asthma." in d.payload


def test_past_a_limit_enforce_withholds_and_audit_records() -> None:
    limits = Limits(max_text=1_000)
    text = "x" * 2_000 + " Bob Ray"
    blocked = guard("enforce", limits=limits).check_exit("final_response", None, text)
    assert blocked.blocked and blocked.error == "limit:max_text" and "could not read" in str(blocked.message)
    audit = guard("audit", limits=limits).check_exit("final_response", None, text)
    assert audit.action == "allow" and audit.error == "limit:max_text"


def test_policy_file_with_recipients_disclosures_and_a_mail_tool(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(
        "atoms:\n  - {id: a, type: diagnosis, value: 'asthma'}\n"
        "recipients:\n  - {id: requester, kind: requester}\n  - {id: 'ext:vendor', kind: external}\n"
        "disclosures:\n  - {atom_type: '*', recipient: requester, allow: true}\n"
        "tools:\n  - {name: send_email, sink: email, exit: {channel: email, recipient_arg: to}}\n")
    g = Guard(path, mode="enforce")
    assert not g.check_exit("final_response", None, "asthma").blocked
    assert g.check_exit("email", "ext:vendor", "asthma").blocked
    assert g.policy.tool("send_email").exit is not None


def test_the_docs_snippet_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/exposure-guard.md's first python block, executed as written."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "exposure-guard.md").read_text()
    exec(doc.split("```python\n", 1)[1].split("```", 1)[0], {})
    assert capsys.readouterr().out == "You have asthma; Bob has [DIAGNOSIS_1].\n"
