"""Unregistered PII through Presidio, configured to run fully offline (extra ``presidio``).

* No model download: by default Presidio's pattern recognizers run on its no-op NLP engine (no
  spaCy model at all). Named-entity recognizers (PERSON, LOCATION) need a spaCy model; pass
  ``spacy_model=`` the name of an *installed* model package — tpguard never downloads one.
* No public-suffix download: Presidio's e-mail recognizer calls ``tldextract``, which fetches the
  public suffix list on first use. tpguard swaps in an extractor that reads only the snapshot
  bundled with the ``tldextract`` package.

Findings have ``method="pii"``, ``atom_id="pii:<ENTITY>"`` and ``atom_type`` the entity in lower case.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from typing import Any

from .findings import Finding

__all__ = ["DEFAULT_ENTITIES", "PiiDetector", "offline_analyzer"]

DEFAULT_ENTITIES = (
    "EMAIL_ADDRESS", "PHONE_NUMBER", "CREDIT_CARD", "US_SSN", "IBAN_CODE", "IP_ADDRESS",
    "US_BANK_NUMBER", "US_PASSPORT", "US_DRIVER_LICENSE", "CRYPTO", "MEDICAL_LICENSE",
)


def _offline_tld_extractor() -> Any:
    import tldextract

    # suffix_list_urls=() → never fetch; cache_dir=None → never write; the bundled snapshot is used.
    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, fallback_to_snapshot=True)


def offline_analyzer(spacy_model: str | None = None, language: str = "en") -> Any:
    """A Presidio ``AnalyzerEngine`` that never touches the network."""
    from presidio_analyzer import AnalyzerEngine, RecognizerRegistry
    from presidio_analyzer.predefined_recognizers import EmailRecognizer

    extractor = _offline_tld_extractor()

    class OfflineEmailRecognizer(EmailRecognizer):
        def validate_result(self, pattern_text: str) -> bool:
            return bool(extractor(pattern_text).fqdn)

    nlp_engine: Any
    if spacy_model is None:
        from presidio_analyzer.nlp_engine import NoOpNlpEngine

        nlp_engine = NoOpNlpEngine(models=[{"lang_code": language, "model_name": "none"}])
    else:
        import spacy.util
        from presidio_analyzer.nlp_engine import SpacyNlpEngine

        if not spacy.util.is_package(spacy_model):
            raise RuntimeError(
                f"spaCy model package {spacy_model!r} is not installed; tpguard does not download "
                "models. Install it as a package, or pass spacy_model=None for pattern recognizers."
            )
        nlp_engine = SpacyNlpEngine(models=[{"lang_code": language, "model_name": spacy_model}])
        nlp_engine.load()  # the registry asks a loaded engine for its languages
    registry = RecognizerRegistry(supported_languages=[language])
    loader_log = logging.getLogger("presidio-analyzer")
    level = loader_log.level
    loader_log.setLevel(logging.ERROR)  # it warns once per recognizer of every other language
    try:
        registry.load_predefined_recognizers(languages=[language], nlp_engine=nlp_engine)
    finally:
        loader_log.setLevel(level)
    for rec in list(registry.recognizers):
        rec_name = str(getattr(rec, "name", ""))
        if type(rec).__name__ == "EmailRecognizer":
            registry.remove_recognizer(rec_name)
        elif spacy_model is None and type(rec).__name__ in ("SpacyRecognizer", "StanzaRecognizer"):
            registry.remove_recognizer(rec_name)
    registry.add_recognizer(OfflineEmailRecognizer(supported_language=language))
    return AnalyzerEngine(registry=registry, nlp_engine=nlp_engine, supported_languages=[language])


class PiiDetector:
    """Reports PII that no registered atom covers. Slow (milliseconds): for audits, not hot paths."""

    def __init__(
        self,
        entities: Sequence[str] = DEFAULT_ENTITIES,
        *,
        threshold: float = 0.4,
        spacy_model: str | None = None,
        free_text_only: bool = True,
    ) -> None:
        self.entities = list(entities)
        self.threshold = threshold
        self.free_text_only = free_text_only
        self._analyzer = offline_analyzer(spacy_model)

    def analyze(self, text: str) -> list[tuple[str, int, int, float]]:
        """``(entity, start, end, score)`` for each PII span in ``text``."""
        results = self._analyzer.analyze(
            text=text, language="en", entities=self.entities, score_threshold=self.threshold
        )
        return [(r.entity_type, r.start, r.end, float(r.score)) for r in results]

    def scan_text(
        self, text: str, *, path: str, free_text: bool, known: Collection[Finding] = ()
    ) -> list[Finding]:
        if self.free_text_only and not free_text:
            return []
        out = []
        for entity, start, end, score in self.analyze(text):
            if any(f.start < end and start < f.end for f in known):
                continue  # already a registered atom
            out.append(Finding(f"pii:{entity}", entity.lower(), path, "pii", start, end, score, free_text))
        return out
