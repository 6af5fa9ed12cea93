"""The benchmark measures the MCP proxy (issue 30, item 4): ``--guard-path mcp`` serves a case's
tools as an in-process MCP server behind tpguard's ``GuardedMCPSession`` and the reference agents
call them over MCP. Through the runner's real ``execute_case`` (gateway, SQLite audit log, scorer),
the MCP path must score exactly as the gateway path: same attempts (blocked ones included), same
disclosures, same arguments at the backends, same metrics. The framework agents take the path with
their own MCP client libraries (``langchain-mcp-adapters``, ``mcpadapt``), driven by the scripted
models of ``test_adapter_path`` (leak on the first try, retry without the leak when withheld).
"""

from __future__ import annotations

import json
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from test_adapter_path import (
    _langchain,
    _smolagents,
    conversation,
    parity_cases,
    received,
    run_case,
    score,
)
from test_agents_support import sample
from typer.testing import CliRunner

from tpguard.benchmark.agents import make_agent
from tpguard.benchmark.backends import AuditLog
from tpguard.benchmark.cases.schema import Case
from tpguard.benchmark.guards import make_guard
from tpguard.benchmark.metrics import CaseScorer
from tpguard.benchmark.runner._execute import execute_case
from tpguard.cli import app

pytestmark = pytest.mark.skipif(find_spec("mcp") is None, reason="mcp not installed")


def _run(case: Case, agent: str, path: str, guard: str, audit: AuditLog,
         provider: TracerProvider | None = None) -> dict[str, Any]:
    return execute_case(case, make_agent(agent, guard_path=path), f"{agent}@{path}", make_guard(guard),
                        audit=audit, scorer=CaseScorer(case), seed=0, run_id="mcp-path",
                        tracer_provider=provider)


def _same(audit: AuditLog, mcp: dict[str, Any], gw: dict[str, Any]) -> None:
    assert mcp["error"] is None and gw["error"] is None
    assert {k: v for k, v in mcp["score"].items() if k != "agent"} == \
           {k: v for k, v in gw["score"].items() if k != "agent"}, mcp["case_id"]
    assert mcp["attempts"] == gw["attempts"], mcp["case_id"]  # no "unguarded" attempt
    assert mcp["disclosures"] == gw["disclosures"] and mcp["s_task"] == gw["s_task"]
    assert received(audit, mcp) == received(audit, gw)


@pytest.mark.parametrize("guard", ["audit", "enforce", "redact"])
def test_oracle_scores_the_same_over_mcp(guard: str) -> None:
    with AuditLog(":memory:") as audit:
        for case in sample(4):
            mcp = _run(case, "oracle", "mcp", guard, audit)
            assert mcp["guard_path"] == "mcp"  # tpguard decided in the MCP proxy
            _same(audit, mcp, _run(case, "oracle", "gateway", guard, audit))
            assert mcp["score"]["task_success"] == 1.0 and mcp["score"]["metrics"]["FOR"] == 0.0


@pytest.mark.parametrize("guard", ["off", "enforce", "redact"])
def test_leaky_is_measured_over_mcp(guard: str) -> None:
    actions: set[str] = set()
    with AuditLog(":memory:") as audit:
        for case in sample(4):
            mcp = _run(case, "leaky", "mcp", guard, audit)
            _same(audit, mcp, _run(case, "leaky", "gateway", guard, audit))
            actions |= {a["action"] for a in mcp["attempts"]}
    # the leaks were there and the proxy acted on them (off: the case server's gateway passes all)
    assert actions == {"off": {"allow"}, "enforce": {"allow", "block"},
                       "redact": {"allow", "redact"}}[guard]


def test_recorder_spans_stay_under_the_agent_run_over_mcp() -> None:
    """The caller's trace crosses the MCP client, the proxy and the case server (``_meta``)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with AuditLog(":memory:") as audit:
        _run(sample(1)[0], "leaky", "mcp", "enforce", audit, provider)
    spans = exporter.get_finished_spans()
    (root,) = [s for s in spans if s.name.startswith("invoke_agent")]
    tools = [s for s in spans if s.name.startswith("execute_tool")]
    assert tools and all(s.context.trace_id == root.context.trace_id for s in tools)
    assert any(s.attributes.get("tpguard.decision") == "block" for s in tools)
    assert {s.attributes.get("tpguard.benchmark.guard_path") for s in tools} == {"mcp"}


def test_bench_run_takes_the_mcp_guard_path(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["bench", "run", "--agent", "oracle,leaky", "--guard", "off,enforce",
                                   "--guard-path", "mcp", "--limit", "2", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["guard_paths"] == {"oracle": "mcp", "leaky": "mcp"}
    records = [json.loads(line) for line in (tmp_path / "records.jsonl").read_text().splitlines()]
    assert len(records) == 8 and all(r["error"] is None for r in records)
    assert {r["guard_path"] for r in records if r["guard"] == "enforce"} == {"mcp"}


@pytest.mark.skipif(find_spec("langchain_mcp_adapters") is None or find_spec("mcpadapt") is None,
                    reason="langchain-mcp-adapters / mcpadapt not installed")
@pytest.mark.parametrize("guard", ["audit", "enforce:message", "redact"])
def test_framework_agents_score_the_same_over_mcp(guard: str) -> None:
    actions: set[str] = set()
    with AuditLog(":memory:") as audit:
        for case in parity_cases()[:3]:
            for make, path in ((_langchain, "langchain-mcp"), (_smolagents, "smolagents-mcp")):
                base_agent, agent = make(case, "gateway"), make(case, "mcp")
                base = run_case(case, base_agent, guard, audit, f"{path}-gw")
                rec = run_case(case, agent, guard, audit, path)
                assert rec["guard_path"] == path and rec["result"]["error"] is None, rec["result"]
                assert rec["result"] == base["result"]
                assert score(rec) == score(base) and rec["attempts"] == base["attempts"], (case.id, path)
                assert rec["disclosures"] == base["disclosures"]
                assert received(audit, rec) == received(audit, base)
                if path == "langchain-mcp":  # langchain-mcp-adapters: the very same conversation
                    assert conversation(agent) == conversation(base_agent)
                actions |= {a["action"] for a in rec["attempts"]}
    assert actions == {"audit": {"allow"}, "enforce:message": {"allow", "block"},
                       "redact": {"allow", "block", "redact"}}[guard]


@pytest.mark.parametrize("suite", ["acquisition", "exposure"])
def test_suites_that_do_not_serve_their_tools_over_mcp_say_so(suite: str, tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["bench", "run", "--suite", suite, "--agent", "oracle", "--guard", "off",
                                   "--guard-path", "mcp", "--limit", "1", "--out", str(tmp_path)])
    assert res.exit_code == 2 and "--guard-path mcp" in res.output
