"""Baseline guards, applied at the same interception point as tpguard.

* ``langchain-pii`` — LangChain's ``PIIMiddleware`` detectors for its built-in types (email,
  credit_card, ip, mac_address, url) with the ``redact`` strategy, applied to every string argument.
  This is more generous than where ``PIIMiddleware`` really acts: it does not scan tool-call
  arguments at all (langchain-ai/langchain#37659). Reports say so.
* ``presidio-redact`` — Presidio (offline, pattern recognizers) redacts every detected PII span in
  every string argument, purpose-blind.
* ``drop-free-text`` — blanks every free-text slot.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tpguard import ToolSpec
from tpguard._walk import replace_at
from tpguard.detection import iter_leaves

from .base import GuardAction

if TYPE_CHECKING:
    from ..cases.schema import Case

__all__ = ["DropFreeText", "LangChainPII", "PresidioRedact"]

LANGCHAIN_PII_TYPES = ("email", "credit_card", "ip", "mac_address", "url")


def _rewrite_strings(arguments: dict[str, Any], fn: Any) -> tuple[dict[str, Any], set[str], set[str]]:
    """Apply ``fn(text) -> (new_text, entity_types)`` to every string leaf."""
    replacements: dict[str, str] = {}
    types: set[str] = set()
    for path, _, text in iter_leaves(arguments):
        new, found = fn(text)
        if found:
            replacements[path] = new
            types.update(found)
    if not replacements:
        return arguments, set(), set()
    return replace_at(arguments, replacements), types, set(replacements)


def _rewrite_action(arguments: dict[str, Any], fn: Any) -> GuardAction:
    """``rewrite`` with what ``fn`` changed in the string leaves, else ``allow``."""
    new, types, fields = _rewrite_strings(arguments, fn)
    if not types:
        return GuardAction("allow", arguments)
    return GuardAction("rewrite", new, None, tuple(sorted(types)), tuple(sorted(fields)))


class _LangChainCase:
    def __init__(self) -> None:
        from langchain.agents.middleware import PIIMiddleware

        # The real middleware objects: their resolved detector and strategy are what we apply.
        self._rules = [PIIMiddleware(t, strategy="redact") for t in LANGCHAIN_PII_TYPES]

    def _apply(self, text: str) -> tuple[str, set[str]]:
        from langchain.agents.middleware.pii import apply_strategy

        found: set[str] = set()
        for rule in self._rules:
            matches = rule.detector(text)
            if matches:
                text = apply_strategy(text, matches, rule.strategy)
                found.add(rule.pii_type)
        return text, found

    def process(self, spec: ToolSpec, arguments: dict[str, Any]) -> GuardAction:
        return _rewrite_action(arguments, self._apply)


@dataclass(frozen=True)
class LangChainPII:
    name: str = "langchain-pii"
    description: str = ("LangChain PIIMiddleware built-in detectors (email, credit_card, ip, "
                        "mac_address, url), redact strategy, on every tool-call argument")

    def prepare(self, case: Case) -> _LangChainCase:
        return _LangChainCase()


_ANALYZER_LOCK = threading.Lock()
_ANALYZER: Any = None


def _analyzer() -> Any:
    global _ANALYZER
    with _ANALYZER_LOCK:
        if _ANALYZER is None:
            from tpguard.pii import offline_analyzer

            _ANALYZER = offline_analyzer()
        return _ANALYZER


class _PresidioCase:
    def __init__(self, threshold: float) -> None:
        self._analyzer = _analyzer()
        self._threshold = threshold

    def _apply(self, text: str) -> tuple[str, set[str]]:
        results = self._analyzer.analyze(text=text, language="en", score_threshold=self._threshold)
        if not results:
            return text, set()
        spans = sorted(((r.start, r.end, r.entity_type) for r in results), key=lambda s: (s[0], -s[1]))
        out, pos, types = [], 0, set()
        for start, end, entity in spans:
            if start < pos:
                continue
            out.append(text[pos:start])
            out.append(f"<{entity}>")
            types.add(entity)
            pos = end
        out.append(text[pos:])
        return "".join(out), types

    def process(self, spec: ToolSpec, arguments: dict[str, Any]) -> GuardAction:
        return _rewrite_action(arguments, self._apply)


@dataclass(frozen=True)
class PresidioRedact:
    name: str = "presidio-redact"
    description: str = "Presidio (offline pattern recognizers) redacts all detected PII in every argument"
    threshold: float = 0.4

    def prepare(self, case: Case) -> _PresidioCase:
        return _PresidioCase(self.threshold)


class _DropCase:
    def process(self, spec: ToolSpec, arguments: dict[str, Any]) -> GuardAction:
        slots = [p for p, key, text in iter_leaves(arguments)
                 if (key in spec.free_text or p in spec.free_text) and text]
        if not slots:
            return GuardAction("allow", arguments)
        return GuardAction("rewrite", replace_at(arguments, dict.fromkeys(slots, "")), None,
                           ("free_text",), tuple(sorted(slots)))


@dataclass(frozen=True)
class DropFreeText:
    name: str = "drop-free-text"
    description: str = "blanks every free-text slot (note, message, summary, …)"

    def prepare(self, case: Case) -> _DropCase:
        return _DropCase()
