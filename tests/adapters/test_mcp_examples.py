"""``examples/mcp/client.py`` runs and prints what docs/mcp.md says it prints."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("mcp")

from mcp_fixtures import EXAMPLES, NAME, PHONE


def test_the_example_client_is_refused_in_enforce_and_the_server_gets_only_the_clean_call() -> None:
    out = subprocess.run([sys.executable, str(EXAMPLES / "mcp" / "client.py"), "enforce"],
                         capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.splitlines()
    assert lines[0] == "tools: team_handoff, notify_patient, visit_summary"
    assert lines[1].startswith("error: tpguard withheld this call to team_handoff") and "'reason': 'policy'" in lines[1]
    assert lines[2] == "ok: Handoff queued for pickup RX-88213."
    assert lines[3] == "the server received: ['Prescription RX-88213 is ready for pickup.']"
    assert NAME not in out.stdout + out.stderr and PHONE not in out.stdout + out.stderr
