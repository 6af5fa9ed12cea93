"""Which values the detector can find (:func:`is_detectable`), and the forms of an atom's keys it
indexes besides the keys as written: a person-like name with its words swapped
(:func:`_swapped_names`), a multi-word key with its words run together (:func:`_joined`)."""

from __future__ import annotations

import re

from ._normalize import normalize_key
from ._skeleton_key import is_numeric, skeleton_key

__all__ = ["is_detectable"]

_MIN_KEY = 3
_NAME_WORD = re.compile(r"[^\W\d_]+(?:['.\-][^\W\d_]+)*")


def is_detectable(value: str) -> bool:
    """True iff the detector can find ``value``: its normalized form has ≥ 3 characters (shorter
    keys would match inside ordinary words and numbers, so they are not indexed). Pure, cheap."""
    return len(normalize_key(value)) >= _MIN_KEY


def _swapped_names(value: str) -> tuple[str, ...]:
    """``Gonzalez, Maria`` and ``Gonzalez Maria`` for a person-like value: 2–3 capitalized words
    of letters only (``Maria Gonzalez``, ``Anne-Marie de Wit`` is not: ``de`` is lower case)."""
    words = value.split()
    if not 2 <= len(words) <= 3 or not all(_NAME_WORD.fullmatch(w) and w[0].isupper() for w in words):
        return ()
    last, rest = words[-1], " ".join(words[:-1])
    return normalize_key(f"{last}, {rest}"), normalize_key(f"{last} {rest}")


#: multi-word keys of up to this many words are indexed with every subset of their spaces removed
#: (``2**(n-1) - 1`` joined forms: 7 at most); longer keys with all of them removed only
_JOIN_ALL_WORDS = 4
#: a joined form shorter than this is not indexed (``a b c`` → ``abc`` would match a word)
_MIN_JOINED = 6


def _joined(key: str) -> tuple[str, ...]:
    """The forms of a multi-word normalized key with its words run together: ``mariagonzalez``,
    ``blueshield ppo``, ``blue shieldppo``, ``blueshieldppo``, ``hepatitisb`` — every subset of its
    spaces removed for keys of up to ``_JOIN_ALL_WORDS`` words, all of them for longer ones.
    Numbers and identifiers get none: their skeleton already ignores spaces (:mod:`._digits`).
    Cost: O(len(key)) per form, at most 7 forms, built once with the automaton."""
    words = key.split(" ")
    n = len(words)
    if n < 2 or len(key) - n + 1 < _MIN_JOINED or not any(c.isalpha() for c in key):
        return ()
    if is_numeric(key) or skeleton_key(key) is not None:
        return ()
    if n > _JOIN_ALL_WORDS:
        return ("".join(words),)
    out = []
    for mask in range(1, 2 ** (n - 1)):  # bit k set: the space after word k is removed
        parts = [words[0]]
        for k in range(1, n):
            if mask >> (k - 1) & 1:
                parts[-1] += words[k]
            else:
                parts.append(words[k])
        out.append(" ".join(parts))
    return tuple(out)
