"""Telemetry tests: a clean OTel environment per test and the healthcare calls that carry every atom."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tpguard import PolicyKB

_CLEARED = ("OTEL_", "TPGUARD_HASH_KEY", "TPGUARD_RECORD_ARGUMENTS", "TPGUARD_ALLOW_RAW_ARGUMENTS")


@pytest.fixture(autouse=True)
def clean_otel_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No OTEL_* or TPGUARD_* setting from the machine running the tests leaks into a test."""
    for name in list(os.environ):
        if name.startswith(_CLEARED):
            monkeypatch.delenv(name)
    yield


@pytest.fixture(scope="session")
def healthcare(healthcare_policy_path: Path) -> PolicyKB:
    return PolicyKB.from_file(healthcare_policy_path)


#: (tool, arguments) of the ToolPrivacyBench Table 1 workflow, over-sharing on purpose: together the
#: calls carry every atom of the healthcare policy, as value, alias, masked form and semantic
#: variant, in structured fields and in free-text slots, authorized and forbidden.
_HEALTHCARE_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("register_patient", {"patient": "Maria Gonzalez", "phone": "415-555-0199",
                          "note": "Ms. Gonzalez reports chest tightness; insurance Blue Shield PPO"}),
    ("process_payment", {"payer": "Maria Gonzalez", "plan": "Blue Shield PPO", "card": "**** 4417",
                         "callback": "415-555-0199", "note": "card ending 4417, call (415) 555-0199 if declined"}),
    ("issue_prescription", {"patient": "M. Gonzalez", "diagnosis": "pressure in the chest",
                            "instructions": "pickup RX-88213, status ready for pickup"}),
    ("notify_patient", {"to": "415-555-0199",
                        "message": "Ms. Gonzalez, RX-88213 is ready for pickup (tight chest follow-up)"}),
    ("team_handoff", {"ticket": "RX-88213",
                      "summary": "Maria Gonzalez, chest tightness, Blue Shield PPO, card 4417",
                      "work_notes": "phone 415-555-0199; status ready for pickup"}),
    ("team_handoff", {"ticket": "RX-88213", "summary": "patient with tight chest, pays by card",
                      "work_notes": "status ready for pickup"}),
]


@pytest.fixture
def healthcare_calls() -> list[tuple[str, dict[str, Any]]]:
    return [(tool, dict(args)) for tool, args in _HEALTHCARE_CALLS]


@pytest.fixture(scope="session")
def atom_strings(healthcare: PolicyKB) -> dict[str, list[str]]:
    """Every string form of every healthcare atom (value, aliases, variants, masked forms)."""
    out: dict[str, list[str]] = {}
    for atom in healthcare.atoms:
        forms = [atom.value, *atom.aliases, *atom.variants, *atom.masked]
        digits = "".join(ch for ch in atom.value if ch.isdigit())
        if len(digits) >= 7:  # phone numbers also as bare digits
            forms.append(digits)
        out[atom.id] = [f for f in forms if f]
    return out
