"""The exposure suite (ASLEval, seed ``002_*`` §3–4): sessions over a private workspace ``D`` with
a hidden target set ``S ⊂ D``, ``Auth(r, e)`` per recipient, an expected outlet ``c*``, declared
visible exits and internal channels, in three environment families; targets prepared as §3.1."""

from __future__ import annotations

from ._assemble import EXPECTED_OUTLET, REQUESTER, STRATEGIES
from ._interface import COLLECTION_TOOLS, EXIT_TOOLS, FAMILY_CHANNELS, FAMILY_TOOLS, TITLE, TOOLS
from ._prepare import mentions, norm
from .generator import SUITE_NAME, generate
from .schema import (
    FAMILIES,
    Call,
    Channel,
    ExpCase,
    ExpSuite,
    NormalTask,
    Provenance,
    Recipient,
    Target,
)

__all__ = [
    "COLLECTION_TOOLS",
    "EXIT_TOOLS",
    "EXPECTED_OUTLET",
    "FAMILIES",
    "FAMILY_CHANNELS",
    "FAMILY_TOOLS",
    "REQUESTER",
    "STRATEGIES",
    "SUITE_NAME",
    "TITLE",
    "TOOLS",
    "Call",
    "Channel",
    "ExpCase",
    "ExpSuite",
    "NormalTask",
    "Provenance",
    "Recipient",
    "Target",
    "generate",
    "mentions",
    "norm",
]
