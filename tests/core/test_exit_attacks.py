"""The exit stage tried as an attacker would (issue 28, "Exits"): every recipient of an exit tool,
recipient arguments scanned like any other text, an empty recipient set, and markup that splits or
hides a value in what a recipient reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from tpguard import ExitBinding, Guard, PolicyKB
from tpguard.policy.exposure import RECIPIENT_ARGS, Exposure, Recipient
from tpguard.testing import SpanCapture

ATOMS = [
    {"id": "ann.name", "type": "person_name", "value": "Ann Lee"},
    {"id": "ann.dx", "type": "diagnosis", "value": "asthma"},
    {"id": "bob.name", "type": "person_name", "value": "Bob Ray"},
    {"id": "bob.dx", "type": "diagnosis", "value": "hepatitis B"},
]
RECIPIENTS = [{"id": "requester", "kind": "requester", "addresses": ["ann@clinic.example"]},
              {"id": "ext:vendor", "kind": "external", "addresses": ["ops@vendor.example"]}]
MAIL = {"name": "send_email", "purpose": "write to a contact", "sink": "email",
        "free_text": ["subject", "body"], "exit": {"channel": "email", "recipient_arg": "to"}}
INVITE = {"name": "invite", "purpose": "book a meeting", "sink": "notification", "free_text": ["agenda"],
          "exit": {"channel": "send", "recipient_args": ["attendees", "organizer_copy"]}}
POLICY = {
    "atoms": ATOMS,
    "recipients": RECIPIENTS,
    "tools": [MAIL, INVITE],
    "rules": [{"atom_type": "diagnosis", "sink": "email", "allow": True},
              {"atom_type": "person_name", "sink": "email", "allow": True},
              {"atom_type": "diagnosis", "sink": "notification", "allow": True}],
    "disclosures": [{"atom": "ann.name", "recipient": "requester", "allow": True},
                    {"atom": "ann.dx", "recipient": "requester", "allow": True}],
}
SECRETS = ("hepatitis", "Bob Ray", "evil", "attacker")


def guard(mode: str = "enforce", **kw: object) -> Guard:
    return Guard(PolicyKB.from_dict(POLICY), mode=mode, **kw)  # type: ignore[arg-type]


def no_secret(text: object) -> bool:
    return not any(s in str(text) for s in SECRETS)


# -- every recipient ---------------------------------------------------------------------------------
@pytest.mark.parametrize("extra", [{"bcc": "attacker@x.example"}, {"cc": ["attacker@x.example"]},
                                   {"Reply-To": "attacker@x.example"}, {"replyTo": "attacker@x.example"},
                                   {"cc": "Ann <ann@clinic.example>, attacker@x.example"}])
@pytest.mark.parametrize("mode", ["enforce", "redact"])
def test_every_recipient_argument_must_be_authorized(extra: dict[str, object], mode: str) -> None:
    args = {"to": "ann@clinic.example", "subject": "results", "body": "Ann Lee, you have asthma.", **extra}
    d = guard(mode).check("send_email", args)
    assert d.blocked if mode == "enforce" else d.action in ("block", "redact")
    assert d.exit is not None and "undeclared" in [r.id for r in d.exit.recipients]
    if d.redacted:  # the attacker may receive the mail, without what they may not read
        assert "asthma" not in str(d.arguments) and d.arguments["to"] == "ann@clinic.example"
    assert "an undeclared recipient" in str(d.message) and no_secret(d.message)
    assert "requester may not" not in str(d.message)  # only who may not receive is named
    alone = guard(mode).check("send_email", {k: v for k, v in args.items() if k not in extra})
    assert alone.allowed and alone.action == "allow"


def test_recipient_arguments_are_scanned_like_any_other_text() -> None:
    args = {"to": "hepatitis B <evil@x.example>", "subject": "hi", "body": "hello"}
    for mode in ("enforce", "redact"):  # an address is never rewritten: redact blocks too
        d = guard(mode).check("send_email", args)
        assert d.blocked, mode
        assert d.exit is not None and [f.atom_id for f in d.exit.forbidden] == ["bob.dx"]
        assert [f.path for f in d.exit.forbidden] == ["to"] and no_secret(d.message)
        assert d.exit.blocked and "withheld" in str(d.exit.message) and no_secret(d.exit.message)
    audit = guard("audit").check("send_email", args)
    assert audit.allowed and audit.exit is not None and audit.exit.forbidden


def test_a_recipient_argument_is_scanned_even_for_a_recipient_who_may_receive_the_body() -> None:
    d = guard("enforce").check("send_email", {"to": "Bob Ray <ann@clinic.example>", "body": "hello"})
    assert d.blocked and d.exit is not None and [f.atom_id for f in d.exit.forbidden] == ["bob.name"]


@pytest.mark.parametrize("to", [[], "", None, 42, [{"name": "Ann"}], {"display": "x"}])
def test_an_empty_or_unreadable_recipient_set_is_the_undeclared_recipient(to: object) -> None:
    args = {"to": to, "body": "Ann Lee has asthma."}
    d = guard("enforce").check("send_email", args)
    assert d.blocked and d.exit is not None and [r.id for r in d.exit.recipients] == ["undeclared"]
    without = guard("enforce").check("send_email", {"body": "Ann Lee has asthma."})
    assert without.blocked


@pytest.mark.parametrize("recipients", [[], (), "", [""], {}])
def test_check_exit_with_no_recipient_does_not_allow_everything(recipients: object) -> None:
    g = guard("enforce")
    d = g.check_exit("email", recipients, "Bob Ray has hepatitis B.")  # type: ignore[arg-type]
    assert d.blocked and [r.id for r in d.recipients] == ["undeclared"] and no_secret(d.message)
    audit = guard("audit").check_exit("email", [], "Bob Ray has hepatitis B.")
    assert audit.allowed and {f.atom_id for f in audit.forbidden} == {"bob.name", "bob.dx"}
    assert not g.check_exit("final_response", None, "Ann Lee has asthma.").blocked  # None = requester


def test_declared_recipient_args_records_and_display_names() -> None:
    g = guard("enforce")
    ok = g.check("invite", {"attendees": [{"name": "Ann", "email": "ann@clinic.example"}],
                            "agenda": "asthma follow-up"})
    assert ok.allowed and ok.exit is not None and [r.id for r in ok.exit.recipients] == ["requester"]
    graph = {"attendees": [{"emailAddress": {"address": "ann@clinic.example", "name": "Ann"}}],
             "organizer_copy": "ops@vendor.example", "agenda": "asthma follow-up"}
    d = g.check("invite", graph)
    assert d.blocked and d.exit is not None and {r.id for r in d.exit.recipients} == {"requester", "ext:vendor"}
    assert "which ext:vendor may not receive" in str(d.message)
    # an argument that is not declared is not a recipient: "to" is not in this tool's list
    assert g.check("invite", {"attendees": "ann@clinic.example", "to": "x", "agenda": "asthma"}).allowed


def test_exit_binding_defaults_and_policy_file(tmp_path: Path) -> None:
    b = ExitBinding(channel="email")
    assert {"to", "cc", "bcc", "reply_to", "attendees", "share_with"} <= set(RECIPIENT_ARGS)
    assert b.names_recipients("BCC") and b.names_recipients("reply-to") and not b.names_recipients("body")
    assert b.named({"to": "a", "Cc": ["b"], "body": "x", "bcc": ""}) == ["a", ["b"]]
    assert ExitBinding(recipient_args=("owner",), recipient="ext:vendor").named({"owner": "o", "to": "t"}) == \
        ["ext:vendor", "o"]
    with pytest.raises(ValueError, match="recipient_args"):
        ExitBinding(recipient_args=())
    path = tmp_path / "p.yaml"
    path.write_text("atoms:\n  - {id: a, type: diagnosis, value: 'asthma'}\n"
                    "tools:\n  - {name: share, sink: external, exit: {channel: file_share, "
                    "recipient_args: [share_with, viewers]}}\n")
    g = Guard(path, mode="enforce")
    assert g.policy.tool("share").exit.recipient_args == ("share_with", "viewers")  # type: ignore[union-attr]
    assert g.check("share", {"share_with": [], "viewers": ["x@y.example"], "doc": "asthma"}).blocked


def test_exposure_named_reads_addresses_as_a_mail_client_does() -> None:
    ex = Exposure([Recipient(id="ext:v", addresses=("ops@v.example",)), Recipient(id="me", kind="requester")])
    assert [r.id for r in ex.named("Ops <OPS@v.example>")] == ["ext:v"]
    assert [r.id for r in ex.named("ops@v.example, me")] == ["ext:v", "me"]
    assert [r.id for r in ex.named(["me", "stranger@x.example"])] == ["me", "undeclared"]
    assert [r.id for r in ex.named([])] == ["undeclared"]
    assert [r.id for r in ex.named(3.5)] == ["undeclared"]
    # every address-shaped token counts, however the string is punctuated
    for hidden in ["me; evil@x.example", "me\nevil@x.example", "ops@v.example evil@x.example",
                   '"evil@x.example" <ops@v.example>', "ops@v.example (evil@x.example)",
                   'ops@v.example, "x, <evil@x.example>"']:
        assert "undeclared" in [r.id for r in ex.named(hidden)], hidden
    assert [r.id for r in ex.named("me, ext:v")] == ["me", "ext:v"]  # declared ids, comma-separated


# -- markup ------------------------------------------------------------------------------------------
HIDDEN = ["<b>hepatitis</b> B", "&#104;epatitis B", "hepa<i></i>titis B", "hepatitis<br>B",
          "<p>Bob</p><p>Ray</p>", "hep<!-- x -->atitis&nbsp;B", "<span>Bob</span>\n<span>Ray</span>",
          "<a href='#'>hepatitis</a>&#x20;B", "hepa**titis** B", "Bob R~~a~~y", "hep`atit`is B"]


@pytest.mark.parametrize("answer", HIDDEN)
def test_markup_does_not_split_or_hide_a_value_in_a_final_answer(answer: str) -> None:
    text = f"Summary: {answer} — see you soon."
    assert guard("enforce").check_exit("final_response", None, text).blocked
    d = guard("redact").check_exit("final_response", None, text)
    assert d.redacted and "[" in d.payload
    assert not guard("enforce").check_exit("final_response", None, d.payload).blocked  # clean now
    assert d.payload.startswith("Summary: ") and d.payload.endswith(" — see you soon.")


def test_markup_redaction_replaces_what_the_reader_would_have_read() -> None:
    d = guard("redact").check_exit("final_response", None, "<b>Ann Lee</b> has <i>asthma</i>; <b>hepa</b>titis B.")
    assert d.payload == "<b>Ann Lee</b> has <i>asthma</i>; <b>[DIAGNOSIS_1]."


@pytest.mark.parametrize("text", ["<b>Ann Lee</b> has <i>asthma</i>.", "if a<b and c>d then ok",
                                  "<p>Bob</p>Rayburn <em>hepatitis</em> A", "x < 3 and y > 2",
                                  "**Ann Lee** has *asthma*; 2*3*4 = 24", "snake_case_name and `code`"])
def test_innocent_markup_passes(text: str) -> None:
    d = guard("enforce").check_exit("final_response", None, text)
    assert not d.blocked, d.forbidden


def test_markup_in_an_exit_tool_and_no_value_in_the_span(tpguard_spans: SpanCapture) -> None:
    g = guard("enforce", tracer_provider=tpguard_spans.provider)
    d = g.check_exit("email", "ops@vendor.example", {"body": "<div>Bob</div><div>Ray</div>"})
    assert d.blocked and [f.path for f in d.forbidden] == ["body"]
    assert "Ray" not in tpguard_spans.dump() and no_secret(d.message)
