"""Redact integrity: re-checking a redacted call finds no forbidden atom (issue 9, item 5)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tpguard import Guard, PolicyKB

HEALTHCARE = Path(__file__).resolve().parents[2] / "examples" / "healthcare_policy.yaml"
POLICY = PolicyKB.from_file(HEALTHCARE)
FORBIDDEN_HERE = ("Maria Gonzalez", "Ms. Gonzalez", "415-555-0199", "(415) 555 0199", "chest tightness",
                  "tight chest", "Blue Shield PPO", "4417")
ALLOWED_HERE = ("RX-88213", "ready for pickup")

filler = st.text(alphabet=" \n\t.,;:-()abcxyzMG0123456789", max_size=24)
atom = st.sampled_from(FORBIDDEN_HERE + ALLOWED_HERE)
# Pieces are joined on a separator: an atom glued to a letter or digit ("0Maria") is a different
# token, which the detector deliberately does not match (token boundaries, tpguard.detect.detector).
sep = st.sampled_from([" ", "\n", ", ", "\t", "; ", " (", ": "])
free_text = st.lists(st.tuples(st.one_of(filler, atom), sep), min_size=1, max_size=8).map(
    lambda parts: "".join(p + s for p, s in parts))
slot = st.sampled_from(["summary", "work_notes"])
record = st.dictionaries(slot, free_text, min_size=1, max_size=2)
arguments = st.fixed_dictionaries(
    {"case_id": st.sampled_from(["C1", "C-22"])},
    optional={"summary": free_text, "work_notes": free_text,
              "items": st.lists(record, max_size=4),
              "meta": st.fixed_dictionaries({}, optional={"summary": free_text})},
)


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _texts(v)]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    return []


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arguments)
def test_redacted_arguments_hold_no_forbidden_atom(args: dict[str, Any]) -> None:
    g = Guard(POLICY, mode="redact")
    with g.session():
        d = g.check("team_handoff", args)
        assert d.error is None
        if not d.forbidden:
            assert d.action == "allow" and d.arguments is args
            return
        assert d.action == "redact", d.message
        again = g.check("team_handoff", d.arguments, mode="enforce")
        assert not again.forbidden, [(f.atom_id, f.path, f.method) for f in again.forbidden]
        assert d.arguments["case_id"] == args["case_id"]
        for text in _texts(d.arguments):
            assert "Maria Gonzalez" not in text and "415-555-0199" not in text
