"""The fuzzy pass's word offsets (``tpguard._fuzzy_index``): each word of a normalized text starts
at the offset computed from the split's piece lengths, for any text (the offsets replace a regex
over the words, so the two must agree exactly)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tpguard import Guard, PolicyKB, PrivateAtom, ToolSpec
from tpguard._fuzzy_index import _spaced, _split, _word_starts
from tpguard._normalize import normalize

_ALPHABET = st.sampled_from(list("ab Zé-.,:;!()@'\t\n\u00a0\u200b\u2013x1"))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=_ALPHABET, max_size=60))
def test_every_word_starts_where_its_offset_says(text: str) -> None:
    s = normalize(text).text
    pieces, words = _split(s)
    starts = _word_starts(pieces)
    assert len(starts) == len(words)
    spaced = _spaced(s)
    assert [spaced[i : i + len(w)] for i, w in zip(starts, words, strict=True)] == words
    assert starts == sorted(set(starts))


def test_a_typo_after_punctuation_runs_is_redacted_at_its_own_offsets() -> None:
    name = PrivateAtom(id="n", type="person_name", value="Maria Gonzalez")
    guard = Guard(PolicyKB(atoms=(name,)), mode="redact")
    spec = ToolSpec(name="send", sink="external", free_text=("body",))
    body = "Re: re: (fwd) -- ,, ask\tMaria  Gonzales,, about it"
    decision = guard.check(spec, {"body": body})
    assert decision.redacted
    out = decision.arguments["body"]
    assert "Gonzales" not in out and "Maria" not in out
    assert out.startswith("Re: re: (fwd) -- ,, ask\t") and out.endswith(",, about it")
