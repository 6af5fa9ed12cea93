"""A real ``create_agent`` loop in which tools return out-of-scope data: what the model saw, per mode,
through ``@purpose_bound`` and through ``PurposeBoundMiddleware`` (issue 10)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain.agents")  # the langchain extra
from acquisition_scenario import (
    CHART,
    IN_SCOPE,
    NARROWED,
    OUT_OF_SCOPE,
    PURPOSES,
    REDACTED_CHART,
    SCOPES,
    Backend,
)
from langchain.agents import create_agent
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, tool

from tpguard import Guard, purpose_bound
from tpguard.adapters.langchain import PurposeBoundMiddleware
from tpguard.testing import SpanCapture
from tpguard.testing.langchain import ScriptedChatModel

SCRIPT = [[{"name": "query_records", "args": {"fields": "*"}, "id": "q1"}],
          [{"name": "read_chart", "args": {"patient_id": "P-1"}, "id": "c1"}],
          "Ann Lee (415-555-0101) was seen on 2024-03-02."]


def make_tools(backend: Backend) -> list[BaseTool]:
    @tool
    def query_records(fields: str = "*", patient_id: str = "") -> str:
        """Query visit records; fields is a comma-separated list or "*", patient_id "" for all."""
        return backend.query(fields, patient_id)

    @tool
    def read_chart(patient_id: str) -> str:
        """Read a patient's whole chart document."""
        return backend.chart(patient_id)

    return [query_records, read_chart]


def run(path: str, mode: str, tmp_path: Path, spans: SpanCapture) -> tuple[ScriptedChatModel, Backend]:
    guard = Guard(mode=mode, tracer_provider=spans.provider)  # type: ignore[arg-type]
    backend = Backend(tmp_path / f"{path}-{mode}.sqlite")
    model = ScriptedChatModel(SCRIPT)
    tools = make_tools(backend)
    if path == "decorator":
        agent = create_agent(model, tools=[purpose_bound(t, guard=guard, **PURPOSES[t.name]) for t in tools])
    else:
        agent = create_agent(model, tools=tools, middleware=[PurposeBoundMiddleware(guard, tools=PURPOSES)])
    with guard.session(scopes=SCOPES):
        agent.invoke({"messages": [{"role": "user", "content": "When was Ann Lee last seen?"}]})
    return model, backend


def seen(model: ScriptedChatModel, turn: int) -> ToolMessage:
    message = model.seen[turn][-1]
    assert isinstance(message, ToolMessage)
    return message


@pytest.mark.parametrize("path", ["decorator", "middleware"])
def test_audit_the_model_sees_everything_and_spans_record_it(
        path: str, tmp_path: Path, tpguard_spans: SpanCapture) -> None:
    model, backend = run(path, "audit", tmp_path, tpguard_spans)
    assert backend.received[0] == ("query_records", {"fields": "*", "patient_id": ""})
    records = json.loads(str(seen(model, 1).content))
    assert [r["patient"] for r in records] == ["P-1", "P-1", "P-2"] and "diagnosis" in records[0]
    assert seen(model, 2).content == CHART
    query, chart = tpguard_spans.tool_spans("query_records")[0], tpguard_spans.tool_spans("read_chart")[0]
    assert query.attributes["tpguard.decision"] == "allow"
    assert list(query.attributes["tpguard.scope.dimensions"]) == ["field", "subject"]  # over-broad request
    assert query.attributes["tpguard.result.decision"] == "allow"
    assert list(query.attributes["tpguard.result.scope.dimensions"]) == ["confidential", "field", "subject"]
    assert list(chart.attributes["tpguard.result.scope.dimensions"]) == ["confidential", "part"]
    dump = tpguard_spans.dump()
    assert not [v for v in OUT_OF_SCOPE if v in dump]


@pytest.mark.parametrize("path", ["decorator", "middleware"])
def test_enforce_narrows_the_request_and_withholds_an_out_of_scope_result(
        path: str, tmp_path: Path, tpguard_spans: SpanCapture) -> None:
    model, backend = run(path, "enforce", tmp_path, tpguard_spans)
    assert backend.received[0] == ("query_records", NARROWED)
    assert json.loads(str(seen(model, 1).content)) == IN_SCOPE  # in scope: passed as returned
    chart = seen(model, 2)
    assert chart.status == "error" and str(chart.content).startswith("tpguard withheld the result of read_chart")
    assert "1 parts outside the task's parts" in str(chart.content)
    everything = " ".join(str(m.content) for m in model.seen[-1])
    assert not [v for v in OUT_OF_SCOPE if v in everything]
    query = tpguard_spans.tool_spans("query_records")[0]
    assert query.attributes["tpguard.decision"] == "redact"  # narrowed
    assert query.attributes["tpguard.result.decision"] == "allow"
    assert tpguard_spans.tool_spans("read_chart")[0].attributes["tpguard.result.decision"] == "block"


@pytest.mark.parametrize("path", ["decorator", "middleware"])
def test_redact_narrows_the_request_and_filters_the_result(
        path: str, tmp_path: Path, tpguard_spans: SpanCapture) -> None:
    model, backend = run(path, "redact", tmp_path, tpguard_spans)
    assert backend.received[0] == ("query_records", NARROWED)
    assert json.loads(str(seen(model, 1).content)) == IN_SCOPE
    chart = seen(model, 2)
    assert chart.status == "success" and chart.content == REDACTED_CHART
    everything = " ".join(str(m.content) for m in model.seen[-1])
    assert not [v for v in OUT_OF_SCOPE if v in everything]
    assert tpguard_spans.tool_spans("read_chart")[0].attributes["tpguard.result.decision"] == "redact"


def test_content_and_artifact_are_both_filtered(tpguard_spans: SpanCapture) -> None:
    guard = Guard(mode="redact", tracer_provider=tpguard_spans.provider)

    @tool(response_format="content_and_artifact")
    def query_records(patient_id: str = "") -> tuple[str, Any]:
        """Records as text and as rows."""
        rows = [{"id": "v1", "patient": "P-1", "name": "Ann Lee"}, {"id": "v3", "patient": "P-2", "name": "Bob Ray"}]
        return json.dumps(rows), rows

    guarded = purpose_bound(query_records, guard=guard, **PURPOSES["query_records"])
    model = ScriptedChatModel([[{"name": "query_records", "args": {}, "id": "q1"}], "done"])
    scope = SCOPES["query_records"].model_copy(update={"fields": None})
    with guard.session(scopes={"query_records": scope}):
        create_agent(model, tools=[guarded]).invoke({"messages": [{"role": "user", "content": "go"}]})
    message = seen(model, 1)
    assert json.loads(str(message.content)) == [{"id": "v1", "patient": "P-1", "name": "Ann Lee"}]
    assert message.artifact == [{"id": "v1", "patient": "P-1", "name": "Ann Lee"}]


def test_the_docs_snippet_runs(tmp_path: Path) -> None:
    """docs/acquisition-guard.md's five lines, executed against the scenario's backend."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "acquisition-guard.md").read_text()
    snippet = doc.split("```python\n", 1)[1].split("```", 1)[0]
    backend = Backend(tmp_path / "docs.sqlite")
    model = ScriptedChatModel([[{"name": "query_records", "args": {"fields": "*"}, "id": "q1"}], "done"])
    query_records = make_tools(backend)[0]
    exec(snippet, {"query_records": query_records, "model": model, "create_agent": create_agent})
    assert backend.received == [("query_records", {"fields": "name, phone", "patient_id": "P-1"})]
    assert [r["patient"] for r in json.loads(str(seen(model, 1).content))] == ["P-1", "P-1"]
