"""A real trace backend (issue 34): a guarded LangChain agent's spans go to a real Phoenix server on
loopback over OTLP/HTTP, come back through Phoenix's own REST API, and ``tpguard audit`` scores them.

Phoenix runs as a subprocess, so its (many) dependencies are never imported by the test process:
the suite's ``filterwarnings = error`` holds with Phoenix installed or not. The server is the
``phoenix`` command on PATH (``pip install 'tpguard[phoenix]'``) or the one ``TPGUARD_PHOENIX``
names (a Phoenix installed in another virtualenv); without either the test is skipped.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from typer.testing import CliRunner

pytest.importorskip("langchain.agents")  # the langchain extra
pytest.importorskip("opentelemetry.exporter.otlp.proto.http")  # the otlp extra

from langchain.agents import create_agent
from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.tools import tool

from tpguard import Guard
from tpguard.adapters.langchain import PurposeBoundMiddleware
from tpguard.cli import app
from tpguard.telemetry import agent_run_span, configure
from tpguard.testing.langchain import ScriptedChatModel

REPO = Path(__file__).resolve().parents[2]
POLICY = REPO / "examples" / "healthcare_policy.yaml"
#: environment variable naming a ``phoenix`` executable (test-only; not read by tpguard itself)
PHOENIX_ENV = "TPGUARD_PHOENIX"
PROJECT = "tpguard-phoenix-roundtrip"
VALUES = ("Maria Gonzalez", "415-555-0199", "555-0199", "chest tightness")
PLAN = [("notify_patient", {"to": "415-555-0199", "message": "Maria Gonzalez, RX-88213 is ready"}),
        ("team_handoff", {"pickup_id": "RX-88213",
                          "summary": "Maria Gonzalez (415) 555-0199 reports chest tightness"}),
        ("team_handoff", {"pickup_id": "RX-88213", "summary": "call 415-555-0199"})]


def _phoenix() -> str | None:
    return os.environ.get(PHOENIX_ENV) or shutil.which("phoenix")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Phoenix server on 127.0.0.1 (its own SQLite in a temporary folder); its base URL."""
    exe = _phoenix()
    if exe is None:
        pytest.skip(f"Phoenix is not installed (pip install 'tpguard[phoenix]', or {PHOENIX_ENV}="
                    "/path/to/phoenix)")
    work = tmp_path_factory.mktemp("phoenix")
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "PHOENIX_"))}
    env.update(PHOENIX_WORKING_DIR=str(work), PHOENIX_HOST="127.0.0.1", PHOENIX_PORT=str(port),
               PHOENIX_GRPC_PORT=str(_free_port()), PHOENIX_TELEMETRY_ENABLED="false")
    log = (work / "server.log").open("w")
    server = subprocess.Popen([exe, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            if server.poll() is not None:
                pytest.fail(f"Phoenix exited ({server.returncode}): "
                            + (work / "server.log").read_text()[-2000:])
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("Phoenix did not start in 180 s: " + (work / "server.log").read_text()[-2000:])
            time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def _example() -> ModuleType:
    """``examples/phoenix/audit_from_phoenix.py``: its ``fetch_spans`` is what the test reads with."""
    spec = importlib.util.spec_from_file_location("audit_from_phoenix",
                                                  REPO / "examples" / "phoenix" / "audit_from_phoenix.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _script(messages: list[BaseMessage]) -> Any:
    done = [m for m in messages if isinstance(m, ToolMessage)]
    if len(done) == len(PLAN):
        return "All done."
    name, args = PLAN[len(done)]
    return [{"name": name, "args": args, "id": f"call_{len(done)}"}]


def _run_agent(url: str) -> None:
    @tool
    def notify_patient(to: str, message: str) -> str:
        """Text the patient."""
        return "sms queued"

    @tool
    def team_handoff(pickup_id: str, summary: str) -> str:
        """Hand the case to the pharmacy team."""
        return "handed off"

    provider = configure(service_name=PROJECT, endpoint=url)  # OTLP/HTTP to Phoenix's /v1/traces
    guard = Guard(POLICY, mode="audit", tracer_provider=provider)  # default span settings
    agent = create_agent(ScriptedChatModel(_script), tools=[notify_patient, team_handoff],
                         middleware=[PurposeBoundMiddleware(guard)])
    with agent_run_span(provider, "pharmacy-agent", case_id="s1"), guard.session(session_id="s1"):
        result = agent.invoke({"messages": [{"role": "user", "content": "Finish the visit."}]})
    assert result["messages"][-1].content == "All done."
    provider.shutdown()


def test_a_guarded_langchain_agent_round_trips_through_phoenix(phoenix: str, tmp_path: Path) -> None:
    _run_agent(phoenix)
    exported = _example().fetch_spans(phoenix, PROJECT, expect=len(PLAN) + 1, timeout=60)
    tools = [s for s in exported["data"] if s["name"].startswith("execute_tool ")]
    assert len(tools) == len(PLAN), [s["name"] for s in exported["data"]]
    assert {s["span_kind"] for s in tools} == {"TOOL"}  # Phoenix shows them as tool calls
    assert not any(v in json.dumps(exported) for v in VALUES)  # nothing private reached Phoenix
    source = tmp_path / "phoenix_spans.json"
    source.write_text(json.dumps(exported))
    res = CliRunner().invoke(app, ["audit", "--policy", str(POLICY), "--spans", str(source), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["format"] == "phoenix" and out["calls"] == 3 and out["session_count"] == 1
    (session,) = out["sessions"]
    assert session["session"] == "s1" and session["would_block"] == 2
    calls = session["interventions"]
    assert [c["tool"] for c in calls] == ["team_handoff", "team_handoff"]
    assert {t for c in calls for t in c["atom_types"]} == {"person_name", "phone", "medical"}
    assert {f for c in calls for f in c["fields"]} == {"summary"}
    with urllib.request.urlopen(f"{phoenix}/v1/projects", timeout=10) as r:
        projects = {p["name"] for p in json.load(r)["data"]}
    assert PROJECT in projects  # the service name named the project
