"""examples/smolagents_purpose_bound.py runs offline, and against a real HTTP endpoint on loopback.

The second test points the example's real-endpoint branch (smolagents ``OpenAIServerModel``, the
``openai`` SDK over HTTP) at tpguard's scripted OpenAI-compatible server on 127.0.0.1.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("smolagents") is None,
                                reason="smolagents not installed")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "smolagents_purpose_bound.py"
BLOCK_LINE = "team_handoff      block  (withheld medical, phone in summary)"
CLEAN_LINE = "team_handoff received summary: 'RX-88213 is ready for pickup; please prepare it.'"


def _run_example(extra_env: dict[str, str]) -> str:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("OPENAI_") and k.lower() not in ("http_proxy", "https_proxy", "all_proxy")}
    env.update(extra_env, NO_PROXY="127.0.0.1,localhost", PYTHONWARNINGS="error")
    done = subprocess.run([sys.executable, str(EXAMPLE)], env=env, capture_output=True, text=True,
                          timeout=240, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def _check_output(out: str, label: str) -> None:
    for agent in ("ToolCallingAgent", "CodeAgent"):
        assert f"== {agent} ({label}) ==" in out
    assert out.count(BLOCK_LINE) == 2
    assert out.count(CLEAN_LINE) == 2
    assert out.count("final answer: Registered, paid, notified and handed off.") == 2
    assert "415-555-0199" not in out and "chest tightness" not in out
    section = out.split("== CodeAgent")[0]
    decisions = [line.split()[:2] for line in section.splitlines()[1:6]]
    assert decisions == [["register_patient", "allow"], ["process_payment", "allow"],
                         ["notify_patient", "allow"], ["team_handoff", "block"],
                         ["team_handoff", "allow"]]


def test_example_runs_offline() -> None:
    _check_output(_run_example({}), "scripted model")


def _load_example() -> Any:
    spec = importlib.util.spec_from_file_location("smolagents_purpose_bound_example", EXAMPLE)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_example_with_openai_server_model_over_http() -> None:
    from tpguard.testing.openai_server import ScriptedOpenAIServer

    example = _load_example()
    models = {"tools": example.scripted_model(), "code": example.scripted_model()}

    def serve(request: dict[str, Any]) -> Any:
        """Replay the example's own script over the wire (tool calls, or code for CodeAgent)."""
        tools = [SimpleNamespace(name=t["function"]["name"]) for t in request.get("tools") or ()]
        model = models["tools" if tools else "code"]
        message = model.generate(request["messages"], tools_to_call_from=tools or None)
        if message.tool_calls:
            return [{"name": c.function.name, "arguments": c.function.arguments}
                    for c in message.tool_calls]
        return message.content

    with ScriptedOpenAIServer(serve) as server:
        out = _run_example({"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "test-key",
                            "OPENAI_MODEL": "scripted"})
        requests = server.requests
    _check_output(out, "scripted")
    with_tools = [r for r in requests if r.get("tools")]
    assert len(with_tools) == 6 and len(requests) == 12  # 6 model turns per agent
    # The ToolCallingAgent's model read the guard's refusal over HTTP on the step after the block.
    after_block = str(with_tools[4]["messages"][-1])
    assert "tpguard withheld this call to team_handoff" in after_block
    assert "415-555-0199" not in after_block.split("tpguard withheld", 1)[1]
