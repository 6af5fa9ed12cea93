"""``Guard.placeholder_call`` and the feedback wording (issue 31): the blocked call's value-free
form, structured fields included, and messages that name parts, types and placeholders only."""

from __future__ import annotations

from tpguard import Guard, PolicyKB

PHONE, ADDRESS, NAME = "415-555-0199", "12 Elm Street, Springfield", "Maria Gonzalez"
POLICY = {"atoms": [{"id": "phone", "type": "phone", "value": PHONE},
                    {"id": "addr", "type": "home_address", "value": ADDRESS},
                    {"id": "name", "type": "person_name", "value": NAME}],
          "tools": [{"name": "handoff", "purpose": "hand over", "sink": "handoff",
                     "free_text": ["summary"]}],
          "authorizations": [{"atom": "phone", "tool": "handoff", "allow": True}]}


def test_placeholder_call_rewrites_free_text_and_structured_fields() -> None:
    guard = Guard(PolicyKB.from_dict(POLICY), mode="enforce")
    args = {"phone": PHONE, "contact": NAME, "summary": f"{NAME} lives at {ADDRESS}"}
    with guard.session():
        call = guard.placeholder_call("handoff", args)
        assert call is not None
        assert call.arguments == {"phone": PHONE, "contact": "[PERSON_NAME_1]",
                                  "summary": "[PERSON_NAME_1] lives at [HOME_ADDRESS_1]"}
        assert call.paths == ("contact", "summary") and call.types == ("home_address", "person_name")
        # the same placeholders redact would send in this session
        assert guard.check("handoff", {"summary": NAME}, mode="redact").arguments == {
            "summary": "[PERSON_NAME_1]"}
    for text in (call.rewrite_message(), call.fix_message(), repr(call.changes)):
        assert NAME not in text and ADDRESS not in text
    assert call.rewrite_message().startswith(
        "tpguard replaced the person_name in contact with [PERSON_NAME_1]; the home_address and "
        "person_name in summary with [HOME_ADDRESS_1], [PERSON_NAME_1] in your call above")
    assert "change nothing else" in call.fix_message()


def test_nothing_to_rewrite_and_unreadable_calls_give_none() -> None:
    guard = Guard(PolicyKB.from_dict(POLICY), mode="enforce")
    assert guard.placeholder_call("handoff", {"phone": PHONE, "summary": "ready"}) is None
    cyclic: dict[str, object] = {}
    cyclic["self"] = cyclic
    assert guard.placeholder_call("handoff", cyclic) is None  # never raises
    # deciding nothing: the call is still blocked as before, and escalation state is untouched
    assert guard.check("handoff", {"summary": ADDRESS}).blocked
