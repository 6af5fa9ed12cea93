"""Redaction operators: they consume :class:`~tpguard.detect.detector.Finding` s and rewrite text.

Detection and transformation stay apart (as Presidio's analyzer and anonymizer do). One operator
per class, looked up by name in :data:`OPERATORS`.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable, Iterable
from operator import attrgetter
from typing import ClassVar

from .detect.detector import Finding

__all__ = ["OPERATORS", "HashOperator", "Operator", "PlaceholderOperator", "TypeTagOperator",
           "rewrite_text", "widened"]

_NON_WORD = re.compile(r"[^A-Za-z0-9]+")
_START, _END = attrgetter("start"), attrgetter("end")


class Operator:
    """Turns one finding into the text that replaces it."""

    name: ClassVar[str]

    def replacement(self, finding: Finding) -> str:
        raise NotImplementedError


class PlaceholderOperator(Operator):
    """``[PHONE_1]``: typed, numbered, and stable for an atom through ``assign`` (a session's map).
    ``given`` holds the labels this operator has written (a later round of a rewrite must not cut
    into them: :func:`widened`)."""

    name = "placeholder"

    def __init__(self, assign: Callable[[Finding], str]) -> None:
        self._assign = assign
        self.given: set[str] = set()

    def replacement(self, finding: Finding) -> str:
        label = self._assign(finding)
        self.given.add(label)
        return label

    @staticmethod
    def label(atom_type: str, n: int) -> str:
        return f"[{_NON_WORD.sub('_', atom_type).strip('_').upper() or 'PRIVATE'}_{n}]"


class TypeTagOperator(Operator):
    """``<phone>``: the atom type only (what spans record by default)."""

    name = "type_tag"

    def replacement(self, finding: Finding) -> str:
        return f"<{finding.atom_type}>"


class HashOperator(Operator):
    """``<phone:hmac:1f2e…>``: keyed HMAC-SHA256, so equal facts link up across calls without a
    dictionary attack on low-entropy values (a bare hash of a phone number is not private).

    A registered atom is hashed by its canonical value (``canonical(atom_id)``), so
    ``(415) 555-0199`` and ``415-555-0199`` get the same tag; unregistered PII by the matched text.
    """

    name = "hash"

    def __init__(
        self, key: bytes, text: str, canonical: Callable[[str], str | None] = lambda _: None
    ) -> None:
        self._key = key
        self._text = text
        self._canonical = canonical

    def replacement(self, finding: Finding) -> str:
        value = self._canonical(finding.atom_id)
        material = f"{finding.atom_type}:{value}" if value is not None else self._text[
            finding.start : finding.end]
        digest = hmac.new(self._key, material.encode(), hashlib.sha256)
        return f"<{finding.atom_type}:hmac:{digest.hexdigest()[:16]}>"


OPERATORS: dict[str, type[Operator]] = {
    op.name: op for op in (PlaceholderOperator, TypeTagOperator, HashOperator)
}


def widened(text: str, findings: list[Finding], placeholders: Iterable[str]) -> list[Finding]:
    """``findings`` of a text an earlier round rewrote, each span that starts or ends inside one of
    the ``placeholders`` written there widened to cover it whole. A fuzzy match aligns words, and
    a placeholder's words (``EMAIL``, ``1``) are words: ``[EMAIL_1] Bates Avenu`` matches an atom
    ``[EMAIL_1] Bates Avenue`` from its ``EMAIL``, and rewriting that span alone would leave
    ``[[INTERNAL_1]``. O(placeholders × text) with ``str.find``, on the rare later rounds only."""
    cuts = []
    for label in placeholders:
        at = text.find(label)
        while at >= 0:
            cuts.append((at, at + len(label)))
            at = text.find(label, at + len(label))
    if not cuts:
        return findings
    out = []
    for f in findings:
        start, end = f.start, f.end
        for a, b in cuts:
            if a < start < b:
                start = a
            if a < end < b:
                end = b
        out.append(f if start == f.start and end == f.end else f._replace(start=start, end=end))
    return out


def rewrite_text(text: str, findings: Iterable[Finding], operator: Operator) -> str:
    """``text`` with every finding's span replaced; overlapping spans are merged first."""
    # by start, the longer span first: two stable sorts on C keys (no Python key call per finding)
    spans = sorted(findings, key=_END, reverse=True)
    spans.sort(key=_START)
    merged: list[tuple[int, int, Finding]] = []
    for f in spans:
        if merged and f.start < merged[-1][1]:
            s, e, first = merged[-1]
            merged[-1] = (s, max(e, f.end), first)
        else:
            merged.append((f.start, f.end, f))
    out = []
    pos = 0
    for s, e, f in merged:
        out.append(text[pos:s])
        out.append(operator.replacement(f))
        pos = e
    out.append(text[pos:])
    return "".join(out)
