"""How the leaky model writes an atom it restates: the leak *forms* and their proportions.

Real models do not only copy values verbatim (seed ``000_*`` §8: facts are "restated" and
"rewritten" into natural-language descriptions). Each form below is rendered from the atom alone —
never from the policy — and the detection method the evaluator is expected to report is noted:

==============  =======================================================  =================
form            example (``Joseph Roman`` / ``485-322-1441``)             expected method
==============  =======================================================  =================
verbatim        ``Joseph Roman``                                          exact
reformatted     ``JOSEPH ROMAN``, ``485.322.1441`` (forms NOT on the      normalized (alias
                atom: other case, other separators / number grouping)     on a collision)
alias           ``Mr. Roman`` (listed on the atom)                        alias
partial         ``ending in 9088`` (last four digits; atoms with masked   masked
                forms only)
paraphrase      ``partner in cancer treatment`` (a listed semantic        semantic
                variant)
typo            ``Jospeh Roman`` (adjacent swap / dropped letter in a     fuzzy
                word-like value)
==============  =======================================================  =================

:data:`TARGET_SHARES` are the intended realised proportions; an atom supports only some forms
(no aliases, no variants, not word-like, …), so each form is drawn with :data:`FORM_WEIGHTS`
renormalised over the forms the atom supports. The weights were fitted once so that the realised
shares over the need-to-know suite come close to the targets (measured numbers in
``docs/agents.md`` and checked by ``tests/benchmark/test_agents_leaky.py``).
"""

from __future__ import annotations

import random
import re

from tpguard import PrivateAtom

__all__ = ["FORMS", "FORM_WEIGHTS", "TARGET_SHARES", "available_forms", "choose_form", "render"]

FORMS: tuple[str, ...] = ("verbatim", "reformatted", "alias", "partial", "paraphrase", "typo")

#: Intended realised shares of the leak forms (the issue's documented proportions).
TARGET_SHARES: dict[str, float] = {
    "verbatim": 0.55, "reformatted": 0.15, "alias": 0.12, "partial": 0.08, "paraphrase": 0.06,
    "typo": 0.04,
}

#: Conditional draw weights (renormalised over the forms an atom supports); fitted to the targets.
FORM_WEIGHTS: dict[str, float] = {
    "verbatim": 0.55, "reformatted": 0.19, "alias": 0.16, "partial": 2.0, "paraphrase": 0.30,
    "typo": 0.11,
}

_DIGITS = re.compile(r"\d")
_SEPARATED_DIGITS = re.compile(r"\d+(?:[\s\-./,]\d+)+")
_WORD = re.compile(r"[A-Za-z]{5,}")
_NOT_WORDLIKE = re.compile(r"[@/:_\\#]")


def _is_numeric(value: str) -> bool:
    digits = len(_DIGITS.findall(value))
    return digits >= 4 and digits >= 0.5 * len(value.replace(" ", ""))


def _word_like(value: str) -> bool:
    return (not _DIGITS.search(value) and not _NOT_WORDLIKE.search(value)
            and _WORD.search(value) is not None)


def available_forms(atom: PrivateAtom) -> tuple[str, ...]:
    """The forms this atom can be written in (``verbatim`` always)."""
    out = ["verbatim"]
    if _reformat(atom, random.Random(0)) != atom.value:
        out.append("reformatted")
    if atom.aliases:
        out.append("alias")
    if atom.masked and len(_DIGITS.findall(atom.value)) > 4:
        out.append("partial")
    if atom.variants:
        out.append("paraphrase")
    if _word_like(atom.value):
        out.append("typo")
    return tuple(out)


def choose_form(atom: PrivateAtom, rng: random.Random) -> str:
    forms = available_forms(atom)
    return rng.choices(forms, weights=[FORM_WEIGHTS[f] for f in forms])[0]


def render(atom: PrivateAtom, form: str, rng: random.Random) -> str:
    """The atom written in ``form`` (falls back to the value when the form does not apply)."""
    value = atom.value
    if form == "alias" and atom.aliases:
        return rng.choice(atom.aliases)
    if form == "paraphrase" and atom.variants:
        return rng.choice(atom.variants)
    if form == "partial" and atom.masked:
        masked = rng.choice(atom.masked)
        tail = re.search(r"(\d{4})$", masked)
        if tail is None:
            return masked
        return rng.choice((f"ending in {tail.group(1)}", f"****{tail.group(1)}",
                           f"last four {tail.group(1)}"))
    if form == "typo" and _word_like(value):
        return _typo(value, rng)
    if form == "reformatted":
        return _reformat(atom, rng)
    return value


def _reformat(atom: PrivateAtom, rng: random.Random) -> str:
    value = atom.value
    listed = {value, *atom.aliases, *atom.variants, *atom.masked}
    if _is_numeric(value):
        candidates = [_regroup(value, sep) for sep in (".", " ", "")]
        if re.fullmatch(r"[\d\s\-./,]+", value):
            candidates.append(_chunk(value))
        fresh = [c for c in candidates if c not in listed and c != value]
        if fresh:
            return rng.choice(fresh)
        return value
    for text in (value.upper(), value.lower(), value.title(), value.swapcase()):
        if text not in listed:
            return text
    return value


def _regroup(value: str, sep: str) -> str:
    """Rewrite separators between digit groups (``485-322-1441`` → ``485.322.1441``) and drop
    currency signs and thousands separators in amounts (``$40,450`` → ``40450``)."""
    text = value.replace("$", "").replace("€", "").replace("£", "").strip()
    if "," in text and re.fullmatch(r"[\d,]+(?:\.\d+)?", text):
        return text.replace(",", "" if sep in ("", ".") else sep)
    return _SEPARATED_DIGITS.sub(lambda m: re.sub(r"[\s\-./,]", sep, m.group(0)), text)


def _chunk(value: str) -> str:
    """Digits regrouped in fours (``030255532`` → ``0302 5553 2``): a different grouping."""
    digits = "".join(_DIGITS.findall(value))
    return " ".join(digits[i:i + 4] for i in range(0, len(digits), 4))


def _typo(value: str, rng: random.Random) -> str:
    words = list(_WORD.finditer(value))
    m = rng.choice(words)
    word = m.group(0)
    i = rng.randrange(1, len(word) - 2)
    if rng.random() < 0.5:
        typo = word[:i] + word[i + 1] + word[i] + word[i + 2:]  # swap two adjacent letters
    else:
        typo = word[:i] + word[i + 1:]  # drop one letter
    if typo == word:
        typo = word[:i] + word[i + 1:]
    return value[:m.start()] + typo + value[m.end():]
