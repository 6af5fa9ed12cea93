"""Real smolagents loops (ToolCallingAgent and CodeAgent) in which tools return out-of-scope data:
what the model saw, per mode, through ``@purpose_bound``; and the audit-only instrumentor (issue 10)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("smolagents") is None,
                                reason="smolagents not installed")

from acquisition_scenario import (  # noqa: E402
    CHART,
    IN_SCOPE,
    NARROWED,
    OUT_OF_SCOPE,
    PURPOSES,
    REDACTED_CHART,
    SCOPES,
    Backend,
)
from smolagents import CodeAgent, Tool, ToolCallingAgent, tool  # noqa: E402
from smolagents.monitoring import LogLevel  # noqa: E402

from tpguard import Guard, purpose_bound  # noqa: E402
from tpguard.adapters.smolagents import SmolagentsInstrumentor  # noqa: E402
from tpguard.testing import SpanCapture, capture_spans  # noqa: E402
from tpguard.testing.smolagents import ScriptedSmolModel  # noqa: E402

KINDS = ["toolcalling", "code"]


def make_tools(backend: Backend) -> list[Tool]:
    @tool
    def query_records(fields: str = "*", patient_id: str = "") -> str:
        """Query visit records.

        Args:
            fields: a comma-separated list of fields, or "*" for all
            patient_id: the patient, or "" for every patient
        """
        return backend.query(fields, patient_id)

    @tool
    def read_chart(patient_id: str) -> str:
        """Read a patient's whole chart document.

        Args:
            patient_id: the patient
        """
        return backend.chart(patient_id)

    return [query_records, read_chart]


def script() -> list[Any]:
    return [[{"name": "query_records", "arguments": {"fields": "*"}}],
            [{"name": "read_chart", "arguments": {"patient_id": "P-1"}}],
            "Ann Lee was seen on 2024-03-02."]


def run(kind: str, mode: str, tmp_path: Path, cap: SpanCapture) -> tuple[ScriptedSmolModel, Backend]:
    guard = Guard(mode=mode, tracer_provider=cap.provider)  # type: ignore[arg-type]
    backend = Backend(tmp_path / f"{kind}-{mode}.sqlite")
    tools = [purpose_bound(t, guard=guard, **PURPOSES[t.name]) for t in make_tools(backend)]
    model = ScriptedSmolModel(script())
    cls = ToolCallingAgent if kind == "toolcalling" else CodeAgent
    agent = cls(tools=tools, model=model, verbosity_level=LogLevel.OFF, max_steps=5)
    with guard.session(scopes=SCOPES):
        agent.run("When was Ann Lee last seen?")
    return model, backend


def observation(model: ScriptedSmolModel, turn: int) -> str:
    return model.seen[turn][-1]["content"]


def rows_in(text: str) -> list[dict[str, Any]]:
    start = text.index("[{")
    return json.loads(text[start:text.index("}]", start) + 2])


@pytest.mark.parametrize("kind", KINDS)
def test_audit_the_model_sees_everything(kind: str, tmp_path: Path) -> None:
    with capture_spans() as cap:
        model, backend = run(kind, "audit", tmp_path, cap)
        assert backend.received[0] == ("query_records", {"fields": "*", "patient_id": ""})
        assert [r["patient"] for r in rows_in(observation(model, 1))] == ["P-1", "P-1", "P-2"]
        assert "CONFIDENTIAL: disclosed" in observation(model, 2) and "## Billing" in observation(model, 2)
        query = cap.tool_spans("query_records")[0]
        assert list(query.attributes["tpguard.result.scope.dimensions"]) == ["confidential", "field", "subject"]
        assert not [v for v in OUT_OF_SCOPE if v in cap.dump()]


@pytest.mark.parametrize("kind", KINDS)
def test_enforce_the_model_sees_the_narrowed_result_only(kind: str, tmp_path: Path) -> None:
    with capture_spans() as cap:
        model, backend = run(kind, "enforce", tmp_path, cap)
        assert backend.received[0] == ("query_records", NARROWED)
        assert rows_in(observation(model, 1)) == IN_SCOPE
        assert "tpguard withheld the result of read_chart" in observation(model, 2)
        seen = " ".join(m["content"] for m in model.seen[-1])
        assert not [v for v in OUT_OF_SCOPE if v in seen]
        assert cap.tool_spans("read_chart")[0].attributes["tpguard.result.decision"] == "block"


@pytest.mark.parametrize("kind", KINDS)
def test_redact_the_model_sees_filtered_results(kind: str, tmp_path: Path) -> None:
    with capture_spans() as cap:
        model, backend = run(kind, "redact", tmp_path, cap)
        assert backend.received[0] == ("query_records", NARROWED)
        assert rows_in(observation(model, 1)) == IN_SCOPE
        chart = observation(model, 2)
        assert REDACTED_CHART.strip() in chart and CHART.strip() not in chart
        seen = " ".join(m["content"] for m in model.seen[-1])
        assert not [v for v in OUT_OF_SCOPE if v in seen]


@pytest.mark.parametrize("kind", KINDS)
def test_instrumentor_records_results_and_changes_nothing(kind: str, tmp_path: Path) -> None:
    with capture_spans() as cap:
        guard = Guard(mode="audit", tracer_provider=cap.provider)
        backend = Backend(tmp_path / "instr.sqlite")
        model = ScriptedSmolModel(script())
        cls = ToolCallingAgent if kind == "toolcalling" else CodeAgent
        agent = cls(tools=make_tools(backend), model=model, verbosity_level=LogLevel.OFF, max_steps=5)
        instrumentor = SmolagentsInstrumentor(guard, tools=PURPOSES)
        instrumentor.instrument()
        try:
            with guard.session(scopes=SCOPES) as sess:
                agent.run("When was Ann Lee last seen?")
                # the phones that arrived in the result are now tainted atoms with provenance
                tainted = [a for a in sess.atoms if a.type == "phone"]
                assert len(tainted) == 2 and all(sess.provenance(a.id) for a in tainted)
        finally:
            instrumentor.uninstrument()
        assert [r["patient"] for r in rows_in(observation(model, 1))] == ["P-1", "P-1", "P-2"]
        assert CHART.strip() in observation(model, 2)
        query = cap.tool_spans("query_records")[0]
        assert query.attributes["tpguard.result.decision"] == "allow"
        assert list(query.attributes["tpguard.result.scope.dimensions"]) == ["confidential", "field", "subject"]
        assert not [v for v in OUT_OF_SCOPE if v in cap.dump()]
