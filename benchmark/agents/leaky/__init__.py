"""The leaky reference agent: a seeded behaviour model of over-disclosure (seed ``000_*`` §7–8).
Documented in ``docs/agents.md``; a model of behaviour, not a measurement of any LLM."""

from __future__ import annotations

from ._forms import FORM_WEIGHTS, FORMS, TARGET_SHARES, available_forms
from ._profiles import PROFILES, SALIENCE, SINK_RATE, Profile, get_profile
from ._retry import parse_block_message
from .agent import MAX_RETRIES, LeakyAgent

__all__ = [
    "FORMS",
    "FORM_WEIGHTS",
    "MAX_RETRIES",
    "PROFILES",
    "SALIENCE",
    "SINK_RATE",
    "TARGET_SHARES",
    "LeakyAgent",
    "Profile",
    "available_forms",
    "get_profile",
    "parse_block_message",
]
