"""Behaviour profiles of the leaky model, fitted to seed ``000_*``'s tables (targets in
:mod:`._paper`; the fitted-vs-paper table is ``tpguard bench calibrate``, pasted in
``docs/agents.md``).

A profile is a set of rates, not a measurement of any LLM. The probability that an atom the model
"has in context" is restated in a call's free text is::

    p = min(P_MAX, scale · SINK_RATE[sink] · SALIENCE[role] · DOMAIN_RATE[domain]
                   · TRANSITION_RATE[type of the incoming transition])

where ``role`` is how the atom relates to the call: ``carried`` (used by an earlier stage —
progressive diffusion, §8.2), ``background`` (mentioned in the task but needed by no tool),
``current`` (needed by this very call; restating it is harmless unless the cell is conditional) or
``upcoming`` (needed only by a later stage: early stages mostly keep to their purpose, §8.1).

How the tables were fitted (explicit propensities, then one global knob):

* ``SINK_RATE`` — one propensity per sink, scaled multiplicatively until each sink's unguarded FOR
  on the need-to-know suite met Figure 7a (ticket 51.4, handoff 34.8, comment/note 33.4,
  notification 24.7 with e-mails pooled in, backend record 5.8); sinks the figure does not report
  (payment, document, console) keep hand-set rates between record and notification.
* ``FIELD_SHARE`` — how a tool with several slots splits its restated facts (handoffs: summary
  vs work_notes, Figure 7b's 21.7 vs 6.1).
* ``DOMAIN_RATE`` — a multiplier for each of Table B.12's 23 domains, fitted to their FOR
  (a domain the table lacks: 1.0).
* ``TRANSITION_RATE`` — a multiplier on calls reached through a transition type Table 9 reports
  (``processing → summary`` is low-risk there: 5.06 % risky).
* ``scale`` — the global knob: the ``default`` profile's unguarded FOR at Table 8's mean (23.2);
  ``careful`` / ``leaky`` keep FOR ≈ 15–17 / ≈ 30 (Table 8's low and high end).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DOMAIN_RATE", "FIELD_SHARE", "NOTE_RATE", "PROFILES", "P_MAX", "SALIENCE", "SINK_RATE",
           "TRANSITION_RATE", "Profile", "get_profile"]

P_MAX = 0.97

#: Relative propensity of each sink to receive restated context (free-text amplification, §7.3).
SINK_RATE: dict[str, float] = {
    "ticket": 0.594, "handoff": 0.215, "comment": 0.252, "notification": 0.28, "email": 0.15,
    "document": 0.577, "console": 0.275, "external": 0.25, "final_response": 0.25,
    "record": 0.275, "payment": 0.16,
}

#: Share of restated facts per free-text field on tools with several slots (the first slot
#: otherwise); fields not listed share what is left equally.
FIELD_SHARE: dict[str, float] = {"summary": 0.72, "work_notes": 0.28}

#: Optional notes (records, console runs — left empty on the safe path): the chance the model
#: writes one at all when it restates nothing (a neutral remark); when it restates a fact, it
#: writes the note.
NOTE_RATE = 0.35

#: Table B.12's 23 domains: multipliers fitted to their FOR (labels as in the suite): one round
#: of m ← m · paper / fitted on the full suite (default profile, seed 0), then all divided by
#: 1.076 so the suite's overall FOR stays where the sink and field rates were fitted.
DOMAIN_RATE: dict[str, float] = {
    "Charity aid": 0.89, "Coding": 1.05, "Credit-card risk": 2.19,
    "Customer dispute": 1.47, "E-commerce after-sales": 1.2, "Employee offboarding": 1.17,
    "Employee onboarding": 0.59, "Expense": 1.14, "Finance": 0.62,
    "Government service": 1.02, "Hiring": 0.75, "Housing rental": 0.68,
    "Insurance claim": 1.15, "IT helpdesk": 1.83, "Legal contract": 1.05,
    "Logistics and shipping": 1.1, "Medical": 1.77, "Procurement": 1.15,
    "Scholarship": 1.39, "Student counseling": 0.89, "Tax filing": 2.04,
    "Telecom service": 1.22, "Travel booking": 0.68,
}

#: Table 9's transition types: multipliers on the destination call.
TRANSITION_RATE: dict[str, float] = {"ticket → handoff": 2.2, "processing → summary": 0.015}

#: How salient an atom is for the call being written (progressive diffusion, §8.2).
SALIENCE: dict[str, float] = {"carried": 1.0, "background": 0.75, "current": 0.5, "upcoming": 0.2}


@dataclass(frozen=True, slots=True)
class Profile:
    """Rates of one behaviour profile (all probabilities)."""

    name: str
    scale: float            # multiplies SINK_RATE · SALIENCE · DOMAIN_RATE · TRANSITION_RATE
    collapse: float         # extra factor on handoffs: context collapse into the summary (§8.1)
    structured: float       # per coordination call: one fact appended to a structured field
    skip_stage: float       # per required stage: the model forgets to call it (utility slip)
    skip_optional: float    # per optional stage: the model leaves it out
    drop_fact: float        # per required structured fact: written generically instead (slip)


PROFILES: dict[str, Profile] = {
    "careful": Profile("careful", scale=0.68, collapse=1.10, structured=0.03, skip_stage=0.004,
                       skip_optional=0.25, drop_fact=0.06),
    "default": Profile("default", scale=0.95, collapse=1.20, structured=0.06, skip_stage=0.005,
                       skip_optional=0.20, drop_fact=0.08),
    "leaky": Profile("leaky", scale=1.22, collapse=1.25, structured=0.10, skip_stage=0.006,
                     skip_optional=0.15, drop_fact=0.10),
}


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown leaky profile {name!r}; valid: {', '.join(PROFILES)}") from None
