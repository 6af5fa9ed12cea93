"""The LangChain examples run offline (scripted model) and print what they promise."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("langchain.agents")  # the langchain extra

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PHONE = "415-555-0199"


def run_example(name: str) -> str:
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL")}
    proc = subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True, text=True,
                          env=env, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_purpose_bound_example() -> None:
    out = run_example("langchain_purpose_bound.py")
    received = out.split("== what each tool received")[1].split("== decisions")[0]
    handoffs = [line for line in received.splitlines() if line.startswith("team_handoff:")]
    assert len(handoffs) == 1 and PHONE not in handoffs[0] and "chest tightness" not in handoffs[0]
    assert "Please prepare the order." in handoffs[0]
    decisions = out.split("== decisions")[1].split("== final answer")[0].splitlines()
    assert "team_handoff: block (forbidden: medical, phone)" in decisions
    assert decisions[-1] == "team_handoff: allow (forbidden: -)"
    assert [d.split(":")[1].split()[0] for d in decisions if d][:3] == ["allow"] * 3
    assert "handed off" in out.split("== final answer")[1]


def test_audit_existing_agent_example() -> None:
    out = run_example("langchain_audit_existing_agent.py")
    middleware, callbacks = out.split("== callback handler (observe-only)")
    for section in (middleware, callbacks):
        # Nothing changed: the leaky summary reached the tool ...
        assert f"'summary': 'Maria Gonzalez ({PHONE}), chest tightness; prepare RX-88213.'" in section
        # ... and the audit names what the handoff did not need, without the values.
        decision = next(line for line in section.splitlines()
                        if line.startswith("decision  team_handoff"))
        assert "allow (not needed for its purpose: medical, person_name, phone)" in decision
        assert PHONE not in decision and "chest tightness" not in decision
        assert "decision  notify_patient: allow (not needed for its purpose: -)" in section
