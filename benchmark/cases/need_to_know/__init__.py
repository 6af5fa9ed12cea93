"""The need-to-know suite: 23 business domains, deterministic Faker-generated cases (seed ``000_*``
§4.3–4.4, §6.1–6.2)."""

from __future__ import annotations

from ._atoms import KINDS, AtomKind
from .generator import DOMAINS, SUITE_NAME, generate

__all__ = ["DOMAINS", "KINDS", "SUITE_NAME", "AtomKind", "generate"]
