"""The proxy's config file: several upstream servers with per-server defaults and tool specs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from mcp_fixtures import NAME, POLICY
from test_mcp_proxy_http import client, serving
from test_mcp_proxy_stdio import CLEAN, LEAKY, UPSTREAM, received, text

from tpguard.adapters.mcp import build_sessions, load_config
from tpguard.errors import PolicyError


def write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "servers.yaml"
    path.write_text(body, encoding="utf-8")
    return path


def test_a_bad_config_names_the_file_the_place_and_what_was_expected(tmp_path: Path) -> None:
    path = write(tmp_path, f"""
policy: {POLICY}
servers:
  both: {{command: [python, x.py], url: "http://127.0.0.1:1/mcp"}}
  bad_sink:
    command: [python, x.py]
    tools: {{team_handoff: {{sink: carrier_pigeon}}}}
""")
    with pytest.raises(PolicyError) as e:
        load_config(path)
    places = dict(e.value.problems)
    assert str(path) in str(e.value)
    assert "exactly one of command" in places["servers.both"]
    assert "servers.bad_sink.tools.team_handoff.sink" in places


def test_specs_come_from_the_server_then_the_policy_then_the_server_defaults(tmp_path: Path) -> None:
    path = write(tmp_path, """
policy: ../healthcare_policy.yaml
mode: redact
servers:
  clinic:
    command: [python, upstream.py]
    sink: notification
    purpose: tell the patient the next step
    tools:
      team_handoff: {purpose: hand over, sink: handoff, free_text: [summary]}
""".replace("../healthcare_policy.yaml", str(POLICY)))
    sessions = build_sessions(load_config(path), ["clinic"])["clinic"]
    catalog = sessions.catalog
    assert sessions.guard.mode == "redact"
    assert catalog.resolve("team_handoff").spec.purpose == "hand over"            # the server's spec
    assert catalog.resolve("process_payment").spec.sink == "payment"              # the policy's
    fallback = catalog.resolve("visit_summary")
    assert fallback.known and fallback.spec.sink == "notification"                # the server default
    assert sessions.upstream.command == ("python", "upstream.py")


async def test_one_http_proxy_serves_several_configured_servers(tmp_path: Path) -> None:
    rec_a, rec_b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    path = write(tmp_path, f"""
policy: {POLICY}
mode: enforce
servers:
  clinic:
    command: [{sys.executable}, {UPSTREAM}, --record, {rec_a}]
  pharmacy:
    command: [{sys.executable}, {UPSTREAM}]
    env: {{TPGUARD_MCP_RECORD: {rec_b}}}
    hide_unknown: true
""")
    argv = ("-m", "tpguard.cli", "mcp-proxy", "--config", str(path), "--listen", "127.0.0.1:0")
    with serving(*argv) as first:
        assert first.endswith("/clinic/mcp")
        second = first.replace("/clinic/mcp", "/pharmacy/mcp")
        async with client(first) as a, client(second) as b:
            listed_a = {t.name for t in (await a.list_tools()).tools}
            listed_b = {t.name for t in (await b.list_tools()).tools}
            refused = await b.call_tool("team_handoff", LEAKY)
            await a.call_tool("team_handoff", CLEAN)
    assert "visit_summary" in listed_a and "visit_summary" not in listed_b  # hidden on pharmacy only
    assert refused.isError and NAME not in text(refused)
    assert received(rec_b) == []
    assert [c["arguments"]["summary"] for c in received(rec_a)] == [CLEAN["summary"]]


def test_stdio_serves_one_server_and_says_how_to_choose(tmp_path: Path) -> None:
    import subprocess

    path = write(tmp_path, f"""
policy: {POLICY}
servers:
  clinic: {{command: [python, a.py]}}
  pharmacy: {{command: [python, b.py]}}
""")
    out = subprocess.run([sys.executable, "-m", "tpguard.cli", "mcp-proxy", "--config", str(path)],
                         capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert out.returncode == 2 and out.stdout == ""
    assert "lists 2 servers: choose one with --server NAME" in out.stderr
    out = subprocess.run([sys.executable, "-m", "tpguard.cli", "mcp-proxy", "--config", str(path),
                          "--server", "lab"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert out.returncode == 2 and "has no server 'lab' (it has clinic, pharmacy)" in out.stderr
