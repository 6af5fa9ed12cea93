"""Issue 33, item 3: a few non-ASCII characters are normalized where they stand, the ASCII around
them in C — and the normalized text, its offset map and the guard's findings are what they were.

The expectations in ``data/normalize_mixed.json`` were recorded on the code before the change
(``tests/core/normalize_corpus.py`` says how); the property tests compare the sparse pass with the
token pass it replaces on texts hypothesis writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from normalize_corpus import corpus, findings, spans

from tpguard.detect._confusables import FOLD, fold
from tpguard.detect._norm_builder import _Builder
from tpguard.detect._norm_tables import _ASCII_RUN
from tpguard.detect._normalize import _prepass, normalize
from tpguard.detect._offset_map import Normalized

_RECORD = json.loads((Path(__file__).parent / "data" / "normalize_mixed.json").read_text())

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies


def test_the_recorded_corpus_is_todays_corpus() -> None:
    assert [r["text"] for r in _RECORD["normalize"]] == corpus()


@pytest.mark.parametrize("sparse_from", [None, 0], ids=["as-shipped", "always-sparse"])
@pytest.mark.parametrize("record", _RECORD["normalize"], ids=lambda r: repr(r["text"][:30]))
def test_normalized_text_and_offsets_are_the_recorded_ones(record: dict, sparse_from: int | None,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    if sparse_from is not None:  # the corpus is dense with non-ASCII: make every text take the sparse pass
        monkeypatch.setattr("tpguard.detect._normalize._SPARSE", sparse_from)
    norm = normalize(record["text"])
    assert norm.text == record["norm"]
    got = [[s, e, *norm.to_original(s, e)] for s, e in spans(norm.text)]
    assert got == record["map"]


def test_findings_and_redaction_are_the_recorded_ones() -> None:
    # a non-ASCII character beside an atom (curly quotes, a curly apostrophe after an e-mail) and
    # inside one (a non-breaking space in a name and an address, a Cyrillic letter, an accent)
    assert findings() == _RECORD["check"]


def test_the_hand_cases_find_atoms_beside_and_inside_non_ascii_characters() -> None:
    by_text = {c["text"]: c for c in _RECORD["check"]}
    quoted = by_text["Call \u201cLaurie Bates\u201d at 415-555-0142."]
    assert quoted["redacted"] == "Call \u201c[PERSON_NAME_1]\u201d at [PHONE_1]."
    nbsp = by_text["Laurie\u00a0Bates, card ending 4821\u00a0"]
    assert ["name", 0, 12] in nbsp["findings"] and ["card", 26, 30] in nbsp["findings"]
    assert by_text["Jose\u0301 Bates\n\n12\u00a0Oak Street"]["findings"][1] == ["jose", 0, 11]


_PIECES = st.sampled_from([
    "Laurie", "Bates", "12", "Oak", "a", "x1", " ", " ", "  ", "\n", "\t ", "\r\n", "\u00a0", " \u00a0 ",
    "\u2028", "\u201c", "\u201d", "\u2019", "\u00e9", "Jos\u00e9", "\u00df", "e\u0301", "\u0301", "\u0430",
    "\ufb01", "\u0664", "\u2026", "\u00c5", "\u0130", "\u1e9e", "\u00a8",
])


def _same(text: str) -> None:
    sparse, tokens = _Builder(text).run_sparse(), _Builder(text).run()
    assert sparse.text == tokens.text
    n = len(tokens.text)
    for i in range(n):
        for j in range(i + 1, n + 1):
            assert sparse.to_original(i, j) == tokens.to_original(i, j), (text, i, j)


@hypothesis.given(st.lists(_PIECES, max_size=24).map("".join))
@hypothesis.settings(max_examples=400, deadline=None)
def test_the_sparse_pass_is_the_token_pass(text: str) -> None:
    # every span of the normalized text maps back to the same original span by both passes
    _same(text)


@pytest.mark.parametrize("text", [
    "\u00a8  x",  # a letter-run whose normalized form starts with a space, then whitespace
    "x\u00a8 \n y",  # ... ends with one (NFKC of U+00A8 is a space and a combining mark)
    "\u00df  \u00df",  # two segments (ß → ss) around a run of two spaces: merged as emit merges
    "  \u00e9",  # a run at the start
    "\u00e9\n\n",  # a run at the end, right after a segment-free letter run
    "Laurie\u00a0\u00a0Bates",  # a run of non-ASCII whitespace inside an atom
])
def test_the_sparse_pass_at_its_edges(text: str) -> None:
    _same(text)


def _reference(text: str) -> Normalized:
    """The token pass over the whole text (after the pre-pass): what every non-ASCII text that was
    not NFKC-normal took before issue 33."""
    plain, cuts, _ = _prepass(text, _ASCII_RUN.sub("", text))
    norm = _Builder(plain).run()
    norm._cuts = cuts
    return norm


@pytest.mark.parametrize("sparse_from", [8, 0], ids=["as-shipped", "always-sparse"])
@hypothesis.given(text=st.lists(_PIECES, max_size=24).map("".join))
@hypothesis.settings(max_examples=300, deadline=None)
def test_every_path_maps_as_the_token_pass(text: str, sparse_from: int) -> None:
    # normalize picks a path (NFKC-normal once its whitespace is a space; one-to-one letter runs;
    # the sparse pass; the token pass) — each gives the token pass's text and offsets
    from unittest import mock

    with mock.patch("tpguard.detect._normalize._SPARSE", sparse_from):
        norm = normalize(text)
    ref = _reference(text)
    assert norm.text == ref.text
    n = len(ref.text)
    for i in range(n):
        for j in range(i + 1, n + 1):
            assert norm.to_original(i, j) == ref.to_original(i, j), (text, i, j)


@hypothesis.given(st.text(max_size=40))
@hypothesis.settings(max_examples=300, deadline=None)
def test_fold_is_translate(text: str) -> None:
    assert fold(text) == text.translate(FOLD)


def test_each_text_takes_the_cheapest_path_that_maps_it(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def spy(name: str) -> None:
        original = getattr(_Builder, name)

        def wrapped(self: _Builder) -> object:
            out = original(self)
            calls.append(name if out is not None else f"{name}:no")
            return out

        monkeypatch.setattr(_Builder, name, wrapped)

    for name in ("run", "run_sparse", "one_to_one"):
        spy(name)

    def path(text: str) -> list[str]:
        calls.clear()
        normalize(text)
        return list(calls)

    line = "Laurie Bates at 12 Oak St., card ending 4821.\n"
    assert path(line * 50) == []  # ASCII
    assert path("\u201cLaurie\u00a0Bates\u201d Jos\u00e9\n" + line * 50) == []  # NFKC-normal once the space is one
    assert path("x\u00b2 " + line * 50) == ["one_to_one"]  # a superscript: one character for one
    assert path("\ufb01le " + line * 50) == ["one_to_one:no", "run_sparse"]  # a ligature: two for one
    assert path("\u041b\u0430\u0443\u0440\u0438 \ufb01 " * 50) == ["run"]  # non-ASCII throughout
    assert path("Laurie%20Bates\u00a0\ufb01 " + line * 50) == ["run"]  # an escape: the token pass decodes it


@pytest.mark.parametrize("stretch", [" b", "  b", "\n b", "\u00a0\u00a0b  c\t", "   "])
def test_a_stretch_after_a_piece_that_ends_with_a_space_cuts_its_leading_whitespace(stretch: str) -> None:
    # No letter run's normalized form ends with a space in today's Unicode data, so the token
    # pass's rule (a space after a space is cut) is held here directly: the stretch against the
    # same text fed token by token through plain/emit.
    import re

    def builder() -> _Builder:
        b = _Builder("")
        b.pieces, b.n, b.last_space = ["a "], 2, True
        return b

    fast, slow = builder(), builder()
    fast.stretch(2, stretch)
    pos = 2
    for m in re.finditer(r"\s{2,}|[^\S ]", stretch):
        if m.start() + 2 > pos:
            slow.plain(pos, stretch[pos - 2 : m.start()].lower())
        slow.emit(m.start() + 2, m.end() + 2, " ")
        pos = m.end() + 2
    if pos - 2 < len(stretch):
        slow.plain(pos, stretch[pos - 2 :].lower())
    assert "".join(fast.pieces) == "".join(slow.pieces) and fast.n == slow.n
    assert (fast.ns, fast.nl, fast.os, fast.ol) == (slow.ns, slow.nl, slow.os, slow.ol)
    assert fast.last_space == slow.last_space
