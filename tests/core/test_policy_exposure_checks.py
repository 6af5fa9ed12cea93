"""Policy cross-checks of the exposure and acquisition sections (issue 28, item 5): each used to
load and silently weaken the policy; each is now a load error naming the file and the place."""

from __future__ import annotations

from pathlib import Path

import pytest

from tpguard import PolicyError, PolicyKB

HEAD = '''atoms:
  - {id: dx, type: diagnosis, value: "hepatitis B"}
tools:
  - {name: send_email, sink: email, free_text: [body], exit: {channel: email, recipient_arg: to}}
recipients:
  - {id: patient, kind: requester, addresses: ["ann@example.org"]}
  - {id: vendor, kind: external, addresses: ["ops@vendor.example"]}
'''

BAD = {
    "a disclosure naming an unknown atom (a typo'd deny)": (
        HEAD + "disclosures:\n  - {atom_type: '*', recipient: vendor, allow: true}\n"
               "  - {atom: dxx, recipient: vendor, allow: false}\n",
        "disclosures[1].atom", "no atom has the id 'dxx'"),
    "a disclosure naming an unknown recipient": (
        HEAD + "disclosures:\n  - {atom: dx, recipient: vendr, allow: false}\n",
        "disclosures[0].recipient", "no recipient has the id 'vendr'"),
    "duplicate recipient ids": (
        HEAD + "  - {id: vendor, kind: requester}\n",
        "recipients[2].id", "recipients[1] already has the id 'vendor'"),
    "one address under two recipients": (
        HEAD + "  - {id: vendor2, kind: external, addresses: [\"OPS@vendor.example\"]}\n",
        "recipients[2].addresses[0]", "recipients[1] ('vendor') already has it"),
    "contradictory disclosures": (
        HEAD + "disclosures:\n  - {atom: dx, recipient: vendor, allow: true}\n"
               "  - {atom: dx, recipient: vendor, allow: false}\n",
        "disclosures[1]", "disclosures[0] already decides atom 'dx' for recipient 'vendor', differently"),
    "an invalid part_pattern": (
        HEAD.replace("recipients:", "  - {name: read_chart, sink: record, "
                                    "scope: {binding: {part_pattern: '^## (?P<part>.+$'}}}\nrecipients:"),
        "tools[1].scope.binding.part_pattern", "a valid regular expression (missing ), unterminated subpattern"),
}


@pytest.mark.parametrize("name", BAD)
def test_a_cross_check_failure_is_a_load_error_naming_file_and_place(tmp_path: Path, name: str) -> None:
    text, where, expected = BAD[name]
    p = tmp_path / "policy.yaml"
    p.write_text(text)
    with pytest.raises(PolicyError) as info:
        PolicyKB.from_file(p)
    msg = str(info.value)
    assert msg.startswith(f"{p}: ") and where in msg and expected in msg, msg
    assert "hepatitis" not in msg and "ann@example.org" not in msg


def test_consistent_exposure_sections_still_load() -> None:
    kb = PolicyKB.from_dict({
        "atoms": [{"id": "dx", "type": "diagnosis", "value": "hepatitis B"}],
        "recipients": [{"id": "vendor", "addresses": ["ops@vendor.example"]}],
        "disclosures": [{"atom": "dx", "recipient": "vendor", "allow": False},
                        {"atom": "dx", "recipient": "vendor", "allow": False},  # the same, twice
                        {"atom_type": "*", "recipient": "requester", "allow": True},  # implicit requester
                        {"atom": "dx", "recipient_kind": "external", "allow": True}]})
    assert len(kb.disclosures) == 4
