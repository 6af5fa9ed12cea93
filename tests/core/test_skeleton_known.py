"""The skeleton pass skips the hits of an atom whose exact occurrences account for all of them
(``SkeletonIndex.scan(..., known)``): a phone number written as registered is found once, by the
key automaton, and never located again. Skipping must never lose an occurrence: every hit the
full pass would emit and the counted pass does not overlaps an exact match of the same atom
(the one finding ``_resolve`` keeps of the two)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tpguard import PrivateAtom
from tpguard.detect._digits import SkeletonIndex
from tpguard.detect._normalize import normalize
from tpguard.detect.detector import Detector

_ATOMS = [
    PrivateAtom(id="phone", type="phone", value="415-555-0199", aliases=["her work line", "415.555.0199"],
                masked=["***-***-0199"]),
    PrivateAtom(id="card", type="card", value="4111 1111 1111 1111", masked=["4111 **** **** 1111"]),
    PrivateAtom(id="rx", type="prescription_id", value="RX-88213"),
    PrivateAtom(id="intl", type="phone", value="+44 20 7946 0958"),
    PrivateAtom(id="amount", type="amount", value="$1,250.00"),
    PrivateAtom(id="pin", type="pin", value="4417"),
]
_PIECES = st.sampled_from([
    "415-555-0199", "4155550199", "(415) 555-0199", "+1 415 555 0199", "415.555.0199", "her work line",
    "***-***-0199", "4111 1111 1111 1111", "4111111111111111", "4111 **** **** 1111", "RX-88213",
    "RX88213", "rx 88213", "+44 20 7946 0958", "020 7946 0958", "$1,250.00", "1250", "4417", "$44.17",
    "call", "at", "or", "and", "0199", "x", "12", "-", "+", "(", ")",
])
_SEPS = st.sampled_from([" ", "  ", "\n", ", ", "-", "", "/", "\t"])


def _spans(det: Detector, text: str, counted: bool) -> tuple[set[tuple[int, int, int]], list]:
    norm = normalize(text)
    raw: list = []
    known: dict[int, int] = {}
    det._match_keys(text, norm, raw, known, {})
    out: set[tuple[int, int, int]] = set()
    det._skeleton.scan(norm, lambda idx, _m, s, e: out.add((idx, s, e)), known if counted else None)
    return out, raw


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_PIECES, _SEPS), max_size=8))
def test_a_skipped_hit_always_overlaps_an_exact_match_of_its_atom(parts: list[tuple[str, str]]) -> None:
    det = Detector(_ATOMS)
    text = "".join(p + s for p, s in parts)
    full, raw = _spans(det, text, counted=False)
    counted, _ = _spans(det, text, counted=True)
    assert counted <= full
    norm = normalize(text)
    exact = [(r[0], r[1], r[5]) for r in raw]  # (atom, start, end) in the original text
    for idx, s, e in full - counted:  # each overlaps an exact match of its atom (one finding)
        o_s, o_e = norm.to_original(s, e)
        assert any(i == idx and a < o_e and o_s < b for i, a, b in exact), (text, idx)


def test_a_number_written_as_registered_is_not_located_twice() -> None:
    det = Detector([PrivateAtom(id="phone", type="phone", value="415-555-0199"), _ATOMS[2]])
    for text in ("call 415-555-0199 today", "RX-88213 for 415-555-0199, RX-88213 again"):
        full, _ = _spans(det, text, counted=False)
        counted, _ = _spans(det, text, counted=True)
        assert full and not counted
    # the phone atom above also has an alias and a masked form with its digits: more hit
    # entries than exact occurrences, so its hits are located as before
    assert _spans(Detector(_ATOMS), "call 415-555-0199 today", counted=True)[0]


def test_the_same_number_elsewhere_without_separators_is_still_found() -> None:
    det = Detector(_ATOMS)
    text = "call 415-555-0199 or 4155550199"
    counted, _ = _spans(det, text, counted=True)
    assert {(s, e) for _, s, e in counted} >= {(21, 31)}
    found = det.scan_text(text, free_text=True)
    assert [(f.atom_id, f.start, f.end) for f in found] == [("phone", 5, 17), ("phone", 21, 31)]


def test_an_alias_that_is_not_a_number_does_not_count_for_the_number() -> None:
    det = Detector(_ATOMS)
    text = "her work line is 4155550199"
    found = det.scan_text(text, free_text=True)
    assert [(f.atom_id, f.start, f.end) for f in found] == [("phone", 0, 13), ("phone", 17, 27)]


def test_a_masked_key_with_split_digits_does_not_cover_its_hits() -> None:
    index = SkeletonIndex()
    assert index.add(0, "4111 **** **** 1111", "masked") is False  # digits not contiguous
    assert index.add(1, "415-555-0199", "exact") is True
    assert index.add(2, "rx-88213", "exact") is True
    det = Detector(_ATOMS)
    text = "card 4111 **** **** 1111, full 41111111 11111111"
    assert {f.atom_id for f in det.scan_text(text, free_text=True)} == {"card"}
    assert len([f for f in det.scan_text(text, free_text=True) if f.atom_id == "card"]) == 2
