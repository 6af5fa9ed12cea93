"""Guards under comparison (``--guard``): tpguard's modes and baselines, by name."""

from __future__ import annotations

from .base import CaseGuard, GuardAction, GuardUnderTest
from .baselines import (
    AUTO_MODELS,
    DropFreeText,
    LangChainPII,
    PresidioRedact,
    installed_model,
    resolve_presidio_model,
)
from .tpguard_modes import ENFORCE_VARIANTS, Off, TpguardMode, deployment_policy

__all__ = ["AUTO_MODELS", "GUARD_NAMES", "CaseGuard", "GuardAction", "GuardUnderTest",
           "deployment_policy", "installed_model", "make_guard", "resolve_presidio_model"]

GUARD_NAMES = ("off", "audit", "enforce", "enforce:message", "enforce:no-compact", "enforce:then-redact",
               "enforce:no-compact:then-redact", "enforce:compact", "enforce:compact:then-redact", "redact",
               "langchain-pii", "presidio-redact", "drop-free-text")


def make_guard(name: str, *, knows_variants: bool = False,
               presidio_model: str | None = None) -> GuardUnderTest:
    """The guard configuration called ``name`` (one of :data:`GUARD_NAMES`).

    ``presidio_model`` (``presidio-redact`` only): a spaCy pipeline package to run NER with;
    ``None`` uses the first installed of :data:`AUTO_MODELS`, ``"none"`` pattern recognizers only.
    A named package that is not installed is a ``ValueError`` (nothing is ever downloaded)."""
    if name == "off":
        return Off()
    if name in ("audit", "enforce", "redact"):
        return TpguardMode(name, knows_variants=knows_variants)
    if name in ENFORCE_VARIANTS:
        return TpguardMode("enforce", knows_variants=knows_variants, variant=name)
    if name == "langchain-pii":
        return LangChainPII()
    if name == "presidio-redact":
        return PresidioRedact(model=resolve_presidio_model(presidio_model))
    if name == "drop-free-text":
        return DropFreeText()
    raise ValueError(f"unknown guard {name!r}; choose from {', '.join(GUARD_NAMES)}")
