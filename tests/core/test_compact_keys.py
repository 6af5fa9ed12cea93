"""The detector's compact key structures (issue 33, memory) find exactly what the tuple-valued
automata before them found.

* a record: findings of generated texts — every key form (value, alias, masked, swapped name,
  joined words, digit and identifier skeletons), shifted offsets, word boundaries, bulk repeats —
  over a policy of the benchmark's customer records and atoms that share keys; the digest of each
  text's findings was recorded with the code before the change (``data/compact_keys.json``;
  ``python tests/core/test_compact_keys.py`` prints it anew);
* the packed key values against their general form (:meth:`Detector._key_value`), the tuple every
  key's value was, hit by hit (hypothesis);
* the skeleton index's entries against a :class:`SkeletonIndex` of the former kind.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import ahocorasick
from hypothesis import given, settings
from hypothesis import strategies as st

from tpguard import PrivateAtom
from tpguard.benchmark.perf._workload import make_atoms
from tpguard.detect._digits import SkeletonIndex, _Locator, _skeleton
from tpguard.detect._normalize import normalize
from tpguard.detect._offset_map import Normalized
from tpguard.detect._skeleton_key import _digit_span
from tpguard.detect.detector import Detector

_RECORD = Path(__file__).parent / "data" / "compact_keys.json"
_TEXTS = 400

#: atoms that share keys or make one another's forms (general, several-entry keys), with every
#: kind of key
_EXTRA = [
    PrivateAtom(id="x-maria", type="person_name", value="Maria Gonzalez", aliases=["M. Gonzalez"]),
    PrivateAtom(id="x-maria2", type="person_name", value="Maria Gonzalez"),
    PrivateAtom(id="x-user", type="username", value="mariagonzalez"),
    PrivateAtom(id="x-phone", type="phone", value="415-555-0199", aliases=["her work line", "415.555.0199"],
                masked=["***-***-0199"]),
    PrivateAtom(id="x-phone2", type="phone", value="(415) 555-0199"),
    PrivateAtom(id="x-card", type="card", value="4111 1111 1111 1111", masked=["4111 **** **** 1111"]),
    PrivateAtom(id="x-rx", type="prescription_id", value="RX-88213", variants=["rx 88213"]),
    PrivateAtom(id="x-intl", type="phone", value="+44 20 7946 0958"),
    PrivateAtom(id="x-amount", type="amount", value="$1,250.00"),
    PrivateAtom(id="x-pin", type="pin", value="4417"),
    PrivateAtom(id="x-cond", type="condition", value="type 2 diabetes", variants=["T2 diabetes"]),
    PrivateAtom(id="x-plan", type="insurer", value="Blue Shield PPO Gold Plan Plus"),
    PrivateAtom(id="x-hep", type="condition", value="Hepatitis B"),
    PrivateAtom(id="x-cafe", type="place", value="Café Zoë, Straße 7"),
]


def policy_atoms() -> list[PrivateAtom]:
    return make_atoms(2000) + _EXTRA


def _forms(atom: PrivateAtom, rng: random.Random) -> str:
    """One way of writing ``atom`` in a text."""
    value = rng.choice([atom.value, *atom.aliases, *atom.masked, *atom.variants])
    words = value.split()
    choice = rng.randrange(10)
    if choice == 0:
        return value.upper()
    if choice == 1 and len(words) > 1:
        return "".join(words)
    if choice == 2 and len(words) > 1:
        k = rng.randrange(1, len(words))
        return " ".join(words[:k]) + "".join(words[k:])
    if choice == 3 and len(words) in (2, 3):
        return f"{words[-1]}, {' '.join(words[:-1])}"
    if choice == 4:
        return value.replace("-", " ").replace(".", "")
    if choice == 5:
        return value.replace(" ", "&nbsp;") if rng.random() < 0.5 else value.replace("a", "\uff41")
    if choice == 6:
        return value[: max(1, len(value) - 1)]
    if choice == 7:
        return value + rng.choice(["x", "1", "s"])
    return value


_FILLER = ["call", "at", "the", "and", "ticket", "note:", "12", "$44.17", "4/4/17", "ppo", "street", "+1",
           "(", ")", "-", "Apt.", "re", "maria", "gonzalez", "x", "0199", "RX"]
_SEPS = [" ", "  ", "\n", ", ", "-", "", "/", "\t", " | "]


def generated_texts() -> list[str]:
    """Deterministic texts over :func:`policy_atoms`."""
    rng = random.Random(33)
    atoms = policy_atoms()
    texts = []
    for i in range(_TEXTS):
        if i % 40 == 39:  # repeats: the bulk paths (a few keys, then too many keys)
            chosen = rng.sample(atoms, rng.choice([1, 3, 12]))
            texts.append(" ".join(_forms(rng.choice(chosen), rng) if rng.random() < 0.2 else chosen[k % len(chosen)].value
                                  for k in range(400)))
            continue
        parts = []
        for _ in range(rng.randrange(1, 12)):
            piece = _forms(rng.choice(atoms[-len(_EXTRA):] if rng.random() < 0.4 else atoms), rng) \
                if rng.random() < 0.5 else rng.choice(_FILLER)
            parts.append(piece + rng.choice(_SEPS))
        texts.append("".join(parts))
    return texts


def _digest(findings: list) -> str:
    rows = sorted((f.atom_id, f.method, f.start, f.end, round(f.score, 6)) for f in findings)
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()[:16]


def record() -> dict[str, object]:
    det = Detector(policy_atoms())
    texts = generated_texts()
    return {"texts": len(texts), "digests": [_digest(det.scan_text(t)) for t in texts],
            "findings": sum(len(det.scan_text(t)) for t in texts)}


def test_findings_equal_those_recorded_before_the_compact_keys() -> None:
    want = json.loads(_RECORD.read_text())
    got = record()
    assert got["texts"] == want["texts"]
    texts = generated_texts()
    differ = [texts[i][:80] for i, (a, b) in enumerate(zip(got["digests"], want["digests"], strict=True))
              if a != b]
    assert not differ, differ[:5]
    assert got["findings"] == want["findings"]


_DET = Detector(_EXTRA + make_atoms(50))
_PIECES = st.sampled_from(sorted({form for a in _EXTRA for form in (a.value, *a.aliases, *a.masked, *a.variants)}
                                 | {"mariagonzalez", "Gonzalez, Maria", "MARIA GONZALEZ", "hepatitisB",
                                    "blueshield ppo gold plan plus", "BlueShieldPPOGoldPlanPlus", "4155550199",
                                    "xMaria Gonzalez", "Maria Gonzalezx", "&amp;", "\uff41", "call", "at"}
                                 | {a.value for a in make_atoms(50)}))
_GLUE = st.sampled_from([" ", "", ", ", "\n", "-", "x"])


def _old_match_keys(det: Detector, text: str) -> tuple[list, dict[int, int], dict[int, int], set]:
    """The per-hit loop of ``_match_keys`` before the packed rows, on the general values."""
    norm = normalize(text)
    s, n = norm.text, len(norm.text)
    raw: list = []
    counted = []
    covered: set = set()
    for number, start, stop in det._automaton.matches(s):
        length, left_word, right_word, entries, counts = det._key_value(det._automaton.values[number])
        assert stop - start == length
        end = stop - 1
        if left_word and start > 0 and s[start - 1].isalnum():
            continue
        end += 1
        if right_word and end < n and s[end].isalnum():
            continue
        o_start, o_end = norm.to_original(start, end)
        for atom, method, priority in entries:
            if method == "exact" and text[o_start:o_end] != det._values[atom]:
                method, priority = "normalized", 3
            raw.append((atom, o_start, o_start - o_end, priority, method, o_end, 1.0))
        if counts:
            counted.append(counts)
            covered.update((atom, start) for atom in counts[1])
    known: dict[int, int] = {}
    placed: dict[int, int] = {}
    for covers, places in counted:
        for a in covers:
            known[a] = known.get(a, 0) + 1
        for a in places:
            placed[a] = placed.get(a, 0) + 1
    return raw, known, placed, covered


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_PIECES, _GLUE), max_size=10))
def test_packed_values_match_as_their_general_form(parts: list[tuple[str, str]]) -> None:
    text = "".join(p + g for p, g in parts)
    raw: list = []
    known: dict[int, int] = {}
    placed: dict[int, int] = {}
    covered: set = set()
    _DET._match_keys(text, normalize(text), raw, known, placed, covered)
    assert (raw, known, placed, covered) == _old_match_keys(_DET, text)


def test_the_packed_and_general_values_are_both_used() -> None:
    values = list(_DET._automaton.values)
    assert any(v < 0 for v in values) and any(v >= 0 for v in values)
    shared = _DET._key_value(_DET._automaton.get("maria gonzalez"))
    assert len(shared[3]) == 2  # two atoms' exact key: a general value


class _TupleSkeleton(SkeletonIndex):
    """The skeleton index as it was before its packed rows (fdfc457): each key's value the tuple
    ``(length, entries)``; its known hits dropped per atom entry by entry."""

    def build(self) -> None:
        self._old = ahocorasick.Automaton()
        for key, entries in self._keys.items():
            self._old.add_word(key, (len(key), tuple(entries)))
        self._old.make_automaton()

    def scan(self, norm: Normalized, emit: Any, known: dict[int, int] | None = None) -> None:
        skel = _skeleton(norm)
        if not skel:
            return
        hits = list(self._old.iter(skel))
        if hits and known:
            count: Counter[int] = Counter()
            for _, (_, entries) in hits:
                count.update(e[1] for e in entries)
            covered = {idx for idx, n in count.items() if n <= known.get(idx, 0)}
            hits = [(end, (length, kept)) for end, (length, entries) in hits
                    if (kept := tuple(e for e in entries if e[1] not in covered))]
        if not hits:
            return
        s = norm.text
        at = _Locator(norm).at
        for end, (length, entries) in hits:
            ns = at(end - length + 1)
            ne = at(end) + 1
            for entry in entries:
                if entry[0] == "s":
                    if (ns == 0 or not s[ns - 1].isalnum()) and (ne == len(s) or not s[ne].isalnum()):
                        emit(entry[1], entry[2], ns, ne)
                    continue
                span = _digit_span(s, ns, ne, length, entry[3], entry[4])
                if span is not None:
                    emit(entry[1], entry[2], *span)


_DIGIT_ATOMS = [a for a in _EXTRA if any(c.isdigit() for c in a.value)] + [
    PrivateAtom(id="y-phone", type="phone", value="415 555 0199", aliases=["4155550199"]),
    PrivateAtom(id="y-pin", type="pin", value="44-17"),
    PrivateAtom(id="y-acct", type="account", value="AB12 CD34"),
    PrivateAtom(id="y-id", type="customer_id", value="CUS-0012345"),
]
_SKEL_PIECES = st.sampled_from([
    "415-555-0199", "4155550199", "(415) 555-0199", "+1 415 555 0199", "415.555.0199", "***-***-0199",
    "4111 1111 1111 1111", "4111111111111111", "4111 **** **** 1111", "RX-88213", "RX88213", "rx 88213",
    "+44 20 7946 0958", "0044 20 7946 0958", "$1,250.00", "1250", "1,250", "4417", "4 4 1 7", "44-17", "$44.17",
    "AB12CD34", "ab12 cd34", "cus 0012345", "T2", "call", "x", "12", "-", "+", "(", ")", "é",
])


def _emitted(index: SkeletonIndex, text: str, known: dict[int, int] | None) -> list[tuple[int, str, int, int]]:
    out: list[tuple[int, str, int, int]] = []
    index.scan(normalize(text), lambda *hit: out.append(hit), known)
    return out


def _indexes() -> tuple[SkeletonIndex, SkeletonIndex]:
    new, old = SkeletonIndex(), _TupleSkeleton()
    for index in (new, old):
        for idx, atom in enumerate(_DIGIT_ATOMS):
            for key, method in Detector([atom])._keys(atom):
                index.add(idx, normalize(key).text, method)
        index.build()
    return new, old


_NEW_SKEL, _OLD_SKEL = _indexes()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_SKEL_PIECES, _GLUE), max_size=10),
       st.dictionaries(st.integers(0, len(_DIGIT_ATOMS) - 1), st.integers(0, 3)))
def test_packed_skeleton_rows_emit_as_the_tuple_values(parts: list[tuple[str, str]], known: dict[int, int]) -> None:
    text = "".join(p + g for p, g in parts)
    for k in (None, known):
        assert _emitted(_NEW_SKEL, text, k) == _emitted(_OLD_SKEL, text, k)


def test_a_skeleton_text_of_many_hits_is_counted_per_key() -> None:
    text = " ".join(["415-555-0199", "4417", "RX-88213"] * 40)
    for known in ({}, {0: 40}, {i: 40 for i in range(len(_DIGIT_ATOMS))}, {i: 200 for i in range(len(_DIGIT_ATOMS))}):
        assert _emitted(_NEW_SKEL, text, known) == _emitted(_OLD_SKEL, text, known)
    assert _NEW_SKEL._general and any(r >= 0 for r in _NEW_SKEL._rows)


if __name__ == "__main__":
    print(json.dumps(record()))
