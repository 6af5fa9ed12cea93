"""Baseline guards, applied at the same interception point as tpguard.

* ``langchain-pii`` — LangChain's ``PIIMiddleware`` detectors for its built-in types (email,
  credit_card, ip, mac_address, url) with the ``redact`` strategy, applied to every string argument.
  This is more generous than where ``PIIMiddleware`` really acts: it does not scan tool-call
  arguments at all (langchain-ai/langchain#37659). Reports say so.
* ``presidio-redact`` — Presidio redacts every detected PII span in every string argument,
  purpose-blind, offline: its pattern recognizers, plus spaCy NER (person names, locations,
  organizations) when a spaCy English pipeline package is installed — never downloaded.
  ``describe()`` says which recognizers ran; run.json and the report state it.
* ``drop-free-text`` — blanks every free-text slot.
"""

from __future__ import annotations

import importlib.util
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tpguard import ToolSpec
from tpguard.detect._walk import replace_at
from tpguard.detect.detector import iter_leaves

from .base import GuardAction

if TYPE_CHECKING:
    from ..cases.schema import Case

__all__ = ["AUTO_MODELS", "DropFreeText", "LangChainPII", "PresidioRedact", "installed_model",
           "resolve_presidio_model"]

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

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description,
                "detectors": list(LANGCHAIN_PII_TYPES)}

    def prepare(self, case: Case) -> _LangChainCase:
        return _LangChainCase()


#: spaCy English pipelines used when installed and no model is named (official package names).
AUTO_MODELS = ("en_core_web_sm", "en_core_web_md", "en_core_web_lg")
_ANALYZER_LOCK = threading.Lock()
_ANALYZERS: dict[str | None, Any] = {}


def installed_model(name: str) -> bool:
    """Whether the spaCy pipeline package ``name`` is importable (never downloads anything)."""
    return importlib.util.find_spec(name.replace("-", "_")) is not None


def resolve_presidio_model(model: str | None) -> str | None:
    """The spaCy pipeline ``presidio-redact`` will run: ``None`` → the first installed of
    :data:`AUTO_MODELS` (else none); ``"none"`` → none (pattern recognizers only); a name → that
    package, which must be installed (``ValueError`` naming it otherwise — tpguard never downloads
    models)."""
    if model is None:
        return next((m for m in AUTO_MODELS if installed_model(m)), None)
    if model.strip().lower() in ("", "none"):
        return None
    name = model.strip().replace("-", "_")
    if not installed_model(name):
        raise ValueError(f"--presidio-model {model!r}: no such package is installed (tpguard never "
                         "downloads models; see docs/reports.md, or pass 'none' for pattern "
                         "recognizers only)")
    return name


def _analyzer(model: str | None) -> Any:
    """One shared Presidio analyzer per model (pattern recognizers when ``model`` is None)."""
    with _ANALYZER_LOCK:
        if model not in _ANALYZERS:
            from tpguard.detect.presidio import offline_analyzer

            _ANALYZERS[model] = offline_analyzer(model)
        return _ANALYZERS[model]


class _PresidioCase:
    def __init__(self, threshold: float, model: str | None) -> None:
        self._analyzer = _analyzer(model)
        self._threshold = threshold
        # spaCy does not promise a thread-safe pipeline; patterns alone ran unlocked before.
        self._lock = _ANALYZER_LOCK if model else None

    def _analyze(self, text: str) -> list[Any]:
        if self._lock is None:
            return list(self._analyzer.analyze(text=text, language="en",
                                               score_threshold=self._threshold))
        with self._lock:
            return list(self._analyzer.analyze(text=text, language="en",
                                               score_threshold=self._threshold))

    def _apply(self, text: str) -> tuple[str, set[str]]:
        results = self._analyze(text)
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
    """Presidio redacts every detected PII span, purpose-blind. ``model`` is a spaCy pipeline
    package (see :func:`resolve_presidio_model`); with one, Presidio's ``SpacyRecognizer`` adds
    the named entities (PERSON, LOCATION, ORGANIZATION, NRP, DATE_TIME) to the pattern
    recognizers; without one, person names are not detected."""

    model: str | None = None
    threshold: float = 0.4
    name: str = "presidio-redact"

    @property
    def description(self) -> str:
        how = f"spaCy NER ({self.model}) and pattern recognizers" if self.model else \
            "pattern recognizers only, no NER model"
        return f"Presidio ({how}) redacts all detected PII in every argument"

    def describe(self) -> dict[str, Any]:
        """What ran, for ``run.json`` and the report: the recognizers Presidio loaded (names),
        the entity types they detect, whether NER ran and with which spaCy model."""
        registry = _analyzer(self.model).registry
        recognizers = sorted({str(r.name) for r in registry.recognizers})
        entities = sorted({str(e) for r in registry.recognizers for e in r.supported_entities})
        statement = (f"presidio-redact ran spaCy NER ({self.model}) with "
                     f"{len(recognizers) - 1} pattern recognizers" if self.model else
                     "presidio-redact ran pattern recognizers only (no NER model installed: "
                     "person names are not detected)")
        return {"name": self.name, "description": self.description, "ner": self.model is not None,
                "model": self.model, "threshold": self.threshold, "recognizers": recognizers,
                "entities": entities, "statement": statement}

    def prepare(self, case: Case) -> _PresidioCase:
        return _PresidioCase(self.threshold, self.model)


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

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description}

    def prepare(self, case: Case) -> _DropCase:
        return _DropCase()
