"""Behaviour profiles of the leaky model, spanning the range seed ``000_*`` reports (Table 8:
FOR 16.5–28.6 %, TaskSuccess 92–98 %; Figure 7a: tickets the leakiest sink (FOR 51 %), then
handoffs (35 %), comments/notes (33 %) and notifications (25 %), backend records about 6 %).

A profile is a set of rates, not a measurement of any LLM. The probability that an atom the model
"has in context" is restated in a call's free text is::

    p = min(P_MAX, scale · SINK_RATE[sink] · SALIENCE[role])

where ``role`` is how the atom relates to the call: ``carried`` (used by an earlier stage —
progressive diffusion, §8.2), ``background`` (mentioned in the task but needed by no tool),
``current`` (needed by this very call; restating it is harmless unless the cell is conditional) or
``upcoming`` (needed only by a later stage: early stages mostly keep to their purpose, §8.1).
``scale`` was calibrated by measurement (``docs/agents.md``): unguarded FOR ≈ 15 / 22 / 30 % for
``careful`` / ``default`` / ``leaky``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PROFILES", "P_MAX", "SALIENCE", "SINK_RATE", "Profile", "get_profile"]

P_MAX = 0.97

#: Relative propensity of each sink to receive restated context (free-text amplification, §7.3).
SINK_RATE: dict[str, float] = {
    "ticket": 0.80, "handoff": 0.36, "comment": 0.50, "notification": 0.33, "email": 0.36,
    "document": 0.33, "console": 0.25, "external": 0.25, "final_response": 0.25,
    "record": 0.16, "payment": 0.16,
}

#: How salient an atom is for the call being written (progressive diffusion, §8.2).
SALIENCE: dict[str, float] = {"carried": 1.0, "background": 0.75, "current": 0.5, "upcoming": 0.2}


@dataclass(frozen=True, slots=True)
class Profile:
    """Rates of one behaviour profile (all probabilities)."""

    name: str
    scale: float            # multiplies SINK_RATE · SALIENCE
    collapse: float         # extra factor on handoffs: context collapse into the summary (§8.1)
    structured: float       # per coordination call: one fact appended to a structured field
    skip_stage: float       # per required stage: the model forgets to call it (utility slip)
    skip_optional: float    # per optional stage: the model leaves it out
    drop_fact: float        # per required string fact: written generically instead (slip)


PROFILES: dict[str, Profile] = {
    "careful": Profile("careful", scale=0.68, collapse=1.10, structured=0.03, skip_stage=0.008,
                       skip_optional=0.25, drop_fact=0.008),
    "default": Profile("default", scale=0.95, collapse=1.20, structured=0.06, skip_stage=0.012,
                       skip_optional=0.20, drop_fact=0.012),
    "leaky": Profile("leaky", scale=1.22, collapse=1.25, structured=0.10, skip_stage=0.016,
                     skip_optional=0.15, drop_fact=0.016),
}


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown leaky profile {name!r}; valid: {', '.join(PROFILES)}") from None
