"""Policy knowledge base: canonical shape, resolution levels, conditions, matrix, bad files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tpguard import Authorization, PolicyError, PolicyKB, PrivateAtom, Rule, ToolSpec

PHONE = PrivateAtom(id="phone", type="phone", value="415-555-0199")
NAME = PrivateAtom(id="name", type="person_name", value="Maria Gonzalez")
NOTIFY = ToolSpec(name="notify", purpose="tell the patient the next step", sink="notification")
PAY = ToolSpec(name="pay", purpose="Process  Payment", sink="payment")
HANDOFF = ToolSpec(name="handoff", purpose="hand over", sink="handoff", free_text=("summary",))


def kb(**kw) -> PolicyKB:
    return PolicyKB(atoms=(PHONE, NAME), tools=(NOTIFY, PAY, HANDOFF), **kw)


def test_canonical_example_loads(healthcare_policy_path: Path) -> None:
    policy = PolicyKB.from_file(healthcare_policy_path)
    assert len(policy.atoms) == 7 and len(policy.tools) == 5
    assert policy.is_authorized("phone", "notify_patient")
    assert not policy.is_authorized("phone", "team_handoff")
    # Table 1 of the seed: the handoff receives only the pickup id and the workflow status
    allowed = {a for a in policy.matrix().atoms if policy.is_authorized(a, "team_handoff")}
    assert allowed == {"pickup_id", "status"}


def test_each_resolution_level_most_specific_first() -> None:
    rules = (
        Rule(atom_type="phone", sink="notification", allow=False),
        Rule(atom_type="phone", purpose="tell the patient the next step", allow=True),
        Rule(atom_type="phone", tool="pay", allow=True),
        Rule(atom_type="phone", sink="handoff", allow=True),
        Rule(atom_type="person_name", purpose="process payment", allow=True),
    )
    auth = (Authorization(atom="phone", tool="pay", allow=False),)
    policy = kb(rules=rules, authorizations=auth)
    assert policy.access("phone", "pay").level == "atom_tool"  # beats the type_tool rule
    assert not policy.is_authorized("phone", "pay")
    assert policy.access("phone", "notify").level == "type_purpose"  # beats the sink rule
    assert policy.is_authorized("phone", "notify")
    assert policy.access("phone", "handoff").level == "type_sink"
    assert policy.is_authorized("phone", "handoff")
    # purposes compare case- and whitespace-insensitively
    assert policy.access("name", "pay").level == "type_purpose"
    assert policy.access("name", "notify").level == "default"
    assert not policy.is_authorized("name", "notify")
    no_pair = kb(rules=rules)
    assert no_pair.access("phone", "pay").level == "type_tool" and no_pair.is_authorized("phone", "pay")


def test_unknown_atom_or_tool_defaults_to_forbidden() -> None:
    policy = kb()
    assert not policy.is_authorized("nope", "notify")
    assert not policy.is_authorized("phone", "never_registered")


def test_conditional_fields_and_forms() -> None:
    auth = (
        Authorization(atom="phone", tool="notify", allow="conditional", fields=("contact_phone",)),
        Authorization(atom="name", tool="pay", allow="conditional", forms=("masked",)),
    )
    policy = kb(authorizations=auth)
    acc = policy.access("phone", "notify")
    assert acc.state == "conditional" and acc.binary == 1
    assert acc.permits("contact_phone") and acc.permits("items[0].contact_phone")
    assert not acc.permits("message")
    assert not policy.is_authorized("phone", "notify")  # no field given: not authorized
    assert policy.is_authorized("phone", "notify", field="contact_phone")
    assert policy.is_authorized("name", "pay", form="masked")
    assert not policy.is_authorized("name", "pay", form="exact")


def test_matrix_projection() -> None:
    policy = kb(authorizations=(Authorization(atom="phone", tool="notify", allow=True),))
    m = policy.matrix()
    assert m.atoms == ("phone", "name") and m.tools == ("notify", "pay", "handoff")
    assert m.binary() == [[1, 0, 0], [0, 0, 0]]
    assert m.counts() == {"authorized": 1, "forbidden": 5, "conditional": 0}


def test_atom_repr_never_shows_value() -> None:
    assert "415" not in repr(PHONE) and "415" not in str(PHONE)


def _write(tmp_path: Path, text: str, name: str = "policy.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize(
    ("text", "path_part", "expected_part"),
    [
        ("tools:\n  - {name: x, sink: fax}\n", "tools[0].sink", "one of"),
        ("atoms:\n  - {id: a, type: t}\n", "atoms[0].value", "required"),
        ("atoms:\n  - {id: a, type: t, value: vvv, severity: -1}\n", "atoms[0].severity",
         "a number greater than 0"),
        ("atoms: [{id: a, type: t, value: vvv}]\ntools: [{name: x}]\n"
         "authorizations:\n  - {atom: b, tool: x, allow: true}\n", "authorizations[0].atom",
         "expected the id of an atom listed under atoms (no atom has the id 'b')"),
        ("atoms: [{id: a, type: t, value: vvv}]\ntools: [{name: x}]\n"
         "authorizations:\n  - {atom: a, tool: y, allow: true}\n", "authorizations[0].tool",
         "expected the name of a tool listed under tools"),
        ("rules:\n  - {atom_type: phone, tool: x, sink: ticket, allow: true}\n", "rules[0]", "exactly one"),
        ("rules:\n  - {atom_type: phone, tool: x, allow: conditional}\n", "rules[0]", "fields"),
        ("rules:\n  - {atom_type: phone, tool: x, allow: maybe}\n", "rules[0].allow",
         "expected true, false or conditional"),
        ("tools:\n  - {name: x, purpos: typo}\n", "tools[0].purpos",
         "expected one of the keys name, purpose, sink"),
        ("atoms:\n  - {id: a, type: t, value: vvv}\n  - {id: a, type: t, value: www}\n",
         "atoms[1].id", "expected an id used once (atoms[0] already has the id 'a')"),
        ("atoms: [abc]\n", "atoms[0]", "expected a mapping"),
        ("- just\n- a list\n", "<top level>", "mapping"),
        ("atoms: [\n", "line ", "valid YAML"),
    ],
)
def test_bad_files_name_file_path_and_expectation(
    tmp_path: Path, text: str, path_part: str, expected_part: str
) -> None:
    p = _write(tmp_path, text)
    with pytest.raises(PolicyError) as info:
        PolicyKB.from_file(p)
    msg = str(info.value)
    assert msg.startswith(f"{p}: "), msg
    assert path_part in msg and expected_part in msg, msg
    assert "Traceback" not in msg and "DESIGN.md" not in msg and "Input should" not in msg


def test_bad_json_and_missing_file(tmp_path: Path) -> None:
    p = _write(tmp_path, '{"atoms": [', "p.json")
    with pytest.raises(PolicyError, match=r"p\.json: line 1, column \d+: expected valid JSON"):
        PolicyKB.from_file(p)
    with pytest.raises(PolicyError, match="expected an existing policy file"):
        PolicyKB.from_file(tmp_path / "missing.yaml")


def test_errors_do_not_echo_private_values(tmp_path: Path) -> None:
    p = _write(tmp_path, "atoms:\n  - {id: a, type: t, value: '555-0199-SECRET', severity: nope}\n")
    with pytest.raises(PolicyError) as info:
        PolicyKB.from_file(p)
    assert "SECRET" not in str(info.value) and "atoms[0].severity" in str(info.value)


def test_json_roundtrip(tmp_path: Path) -> None:
    policy = kb(rules=(Rule(atom_type="phone", sink="notification", allow=True),))
    p = _write(tmp_path, policy.to_json(), "p.json")
    again = PolicyKB.from_file(p)
    assert again == policy
    assert json.loads(policy.to_json())["rules"][0]["sink"] == "notification"


def test_sink_aliases_and_numbers_as_text() -> None:
    policy = PolicyKB.from_dict({
        "atoms": [{"id": "c", "type": "card_suffix", "value": 4417, "aliases": [4417]}],
        "tools": [{"name": "n", "sink": "Note"}],
    })
    assert policy.tools[0].sink == "comment"
    assert policy.atoms[0].value == "4417" and policy.atoms[0].aliases == ("4417",)
