"""Guards under comparison (``--guard``): tpguard's modes and baselines, by name."""

from __future__ import annotations

from .base import CaseGuard, GuardAction, GuardUnderTest
from .baselines import DropFreeText, LangChainPII, PresidioRedact
from .tpguard_modes import Off, TpguardMode, deployment_policy

__all__ = ["GUARD_NAMES", "CaseGuard", "GuardAction", "GuardUnderTest", "deployment_policy",
           "make_guard"]

GUARD_NAMES = ("off", "audit", "enforce", "redact", "langchain-pii", "presidio-redact",
               "drop-free-text")


def make_guard(name: str, *, knows_variants: bool = False) -> GuardUnderTest:
    """The guard configuration called ``name`` (one of :data:`GUARD_NAMES`)."""
    if name == "off":
        return Off()
    if name in ("audit", "enforce", "redact"):
        return TpguardMode(name, knows_variants=knows_variants)
    if name == "langchain-pii":
        return LangChainPII()
    if name == "presidio-redact":
        return PresidioRedact()
    if name == "drop-free-text":
        return DropFreeText()
    raise ValueError(f"unknown guard {name!r}; choose from {', '.join(GUARD_NAMES)}")
