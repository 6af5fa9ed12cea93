"""The acquisition suite (PrivacyPeek, seed ``001_*``): cases ``⟨q, T, F, E, k_acq, k_disc, p⟩``
over the seven acquisition behaviours and sixteen domains, their deterministic checks, and the
literal matching Acquisition Inspection uses."""

from __future__ import annotations

from ._domains import DOMAINS
from ._tools import READ_TOOLS, TOOL_NAMES, TOOLS, WRITE_TOOLS
from .generator import COUNTS, FILE_COUNTS, SUITE_NAME, generate
from .schema import (
    BEHAVIOURS,
    AcqCase,
    AcqItem,
    AcqSuite,
    Call,
    Completion,
    DiscTarget,
    FilePart,
    FileSpec,
    Scope,
    Substrate,
    Window,
)

__all__ = [
    "BEHAVIOURS",
    "COUNTS",
    "DOMAINS",
    "FILE_COUNTS",
    "READ_TOOLS",
    "SUITE_NAME",
    "TOOLS",
    "TOOL_NAMES",
    "WRITE_TOOLS",
    "AcqCase",
    "AcqItem",
    "AcqSuite",
    "Call",
    "Completion",
    "DiscTarget",
    "FilePart",
    "FileSpec",
    "Scope",
    "Substrate",
    "Window",
    "generate",
]
