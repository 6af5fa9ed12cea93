"""A later round of a rewrite never cuts into a placeholder an earlier round wrote.

A placeholder's words are words to the fuzzy pass: ``[EMAIL_1] Bates Avenu`` (a rewritten e-mail
address before a typo'd street) matches an atom ``[EMAIL_1] Bates Avenue`` from the word ``EMAIL``,
and the code before rewrote that span alone, leaving ``[[INTERNAL_1]`` (issue 33: seen last session
as ``[[MAILING_ADDRESS_1]``). Such a span is now widened to the whole placeholder
(:func:`tpguard.redaction.widened`), in ``check`` (redact), ``placeholder_call`` and ``check_exit``.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tpguard import Guard, PolicyKB, PrivateAtom, ToolSpec
from tpguard.detect.detector import Finding
from tpguard.redaction import widened

_ATOMS = [
    PrivateAtom(id="e", type="email", value="laurie.bates@example.com"),
    PrivateAtom(id="p", type="phone", value="415-555-0142"),
    PrivateAtom(id="d", type="internal", value="[EMAIL_1] Bates Avenue"),
    PrivateAtom(id="m", type="mailing_address", value="Oak Lane [PHONE_1] Depot"),
    PrivateAtom(id="n", type="person_name", value="Laurie Bates"),
]
POLICY = PolicyKB(atoms=_ATOMS, tools=[ToolSpec(name="t", free_text=("note",))])
_NOTE = "write to laurie.bates@example.com Bates Avenu now"


def test_a_fuzzy_match_from_inside_a_placeholder_rewrites_it_whole() -> None:
    guard = Guard(POLICY, mode="redact")
    d = guard.check("t", {"note": _NOTE})
    assert d.redacted
    assert d.arguments == {"note": "write to [INTERNAL_1] now"}  # the code before: "[[INTERNAL_1]"
    assert guard.placeholder_call("t", {"note": _NOTE}).arguments == {"note": "write to [INTERNAL_1] now"}
    d = guard.check("t", {"note": "ship to Oak Lane 415-555-0142 Depo today"})
    assert d.arguments == {"note": "ship to [MAILING_ADDRESS_1] today"}


def test_the_exit_stage_rewrites_it_whole_too() -> None:
    d = Guard(POLICY, mode="redact").check_exit("email", "someone@else.org", {"body": _NOTE})
    assert d.redacted
    assert d.arguments == {"body": "write to [INTERNAL_1] now"}


_PIECES = ["laurie.bates@example.com", "Bates Avenu", "Bates Avenue", "[EMAIL_1] Bates Avenue",
           "Oak Lane", "415-555-0142", "Depo", "Depot", "Laurie Bates", "Laurie Bats", "now", "(", ")", "to"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), min_size=1, max_size=14), st.sampled_from([" ", ", ", "\n"]))
def test_no_rewrite_leaves_a_broken_placeholder(pieces: list[str], sep: str) -> None:
    note = sep.join(pieces)
    guard = Guard(POLICY, mode="redact")
    d = guard.check("t", {"note": note})
    if not d.redacted:
        return
    out = d.arguments["note"]
    assert "[[" not in out and "]]" not in out
    assert out.count("[") == out.count("]")


_label = st.sampled_from(["[EMAIL_1]", "[PHONE_1]", "[INTERNAL_2]"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_label, st.sampled_from(["a", " ", "Bates", "x y"])), max_size=12),
       st.lists(st.tuples(st.integers(0, 60), st.integers(1, 20)), max_size=5))
def test_widened_spans_cover_the_old_ones_and_cut_no_placeholder(parts: list[str],
                                                                spans: list[tuple[int, int]]) -> None:
    text = "".join(parts)
    labels = {"[EMAIL_1]", "[PHONE_1]", "[INTERNAL_2]"}
    found = [Finding("a", "t", "note", "fuzzy", s, min(len(text), s + n)) for s, n in spans if s < len(text)]
    got = widened(text, found, labels)
    assert len(got) == len(found)
    whole = [(i, i + len(label)) for label in labels for i in range(len(text)) if text.startswith(label, i)]
    for old, new in zip(found, got, strict=True):
        assert new.start <= old.start and new.end >= old.end
        assert new._replace(start=old.start, end=old.end) == old
        assert not any(a < new.start < b or a < new.end < b for a, b in whole)
        # widened no further than the placeholders it cut into
        assert new.start == old.start or any(a == new.start < old.start < b for a, b in whole)
        assert new.end == old.end or any(a < old.end < b == new.end for a, b in whole)
