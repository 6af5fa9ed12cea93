"""A real ``create_agent`` loop over the healthcare workflow, per mode, through both entry points.

verify_identity → process_payment → notify_patient → team_handoff; the scripted model puts the
phone number and the symptom into the handoff's ``summary`` and, when a call comes back as an error,
retries it with a clean summary. The tools are real functions that persist what they received in
SQLite; every assertion reads that log, the model's view of the conversation and the spans.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain.agents")  # the langchain extra
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, tool

from tpguard import Guard, PolicyKB, purpose_bound
from tpguard.adapters.langchain import PurposeBoundMiddleware
from tpguard.testing import SpanCapture
from tpguard.testing.langchain import ScriptedChatModel

PHONE, SYMPTOM, NAME = "415-555-0199", "chest tightness", "Maria Gonzalez"
POLICY = {
    "atoms": [
        {"id": "name", "type": "person_name", "value": NAME, "aliases": ["Ms. Gonzalez"]},
        {"id": "phone", "type": "phone", "value": PHONE},
        {"id": "symptom", "type": "medical", "value": SYMPTOM},
        {"id": "insurance", "type": "insurance_type", "value": "Blue Shield PPO"},
        {"id": "card_suffix", "type": "card_suffix", "value": "4417", "masked": ["**** 4417"]},
        {"id": "pickup_id", "type": "pickup_id", "value": "RX-88213"},
    ],
    "authorizations": [
        {"atom": "name", "tool": "verify_identity", "allow": True},
        {"atom": "phone", "tool": "verify_identity", "allow": True},
        {"atom": "name", "tool": "process_payment", "allow": True},
        {"atom": "insurance", "tool": "process_payment", "allow": True},
        {"atom": "card_suffix", "tool": "process_payment", "allow": "conditional",
         "fields": ["card"], "forms": ["masked"]},
        {"atom": "name", "tool": "notify_patient", "allow": True},
        {"atom": "phone", "tool": "notify_patient", "allow": True},
        {"atom": "pickup_id", "tool": "notify_patient", "allow": True},
        {"atom": "pickup_id", "tool": "team_handoff", "allow": True},
    ],
}
SPECS: dict[str, dict[str, Any]] = {
    "verify_identity": {"purpose": "verify the patient's identity", "sink": "record"},
    "process_payment": {"purpose": "process payment", "sink": "payment", "free_text": ["note"]},
    "notify_patient": {"purpose": "tell the patient the next step", "sink": "notification",
                       "free_text": ["message"]},
    "team_handoff": {"purpose": "hand the case to the pharmacy team", "sink": "handoff",
                     "free_text": ["summary"]},
}
LEAKY = f"Pickup RX-88213 is ready. Patient phone {PHONE}, reports {SYMPTOM}. Please prepare the order."
CLEAN = "Pickup RX-88213 is ready. Please prepare the order."
PLAN = [
    ("verify_identity", {"name": NAME, "phone": PHONE}),
    ("process_payment", {"name": NAME, "insurance": "Blue Shield PPO", "card": "**** 4417",
                         "amount": 25.0, "note": "copay"}),
    ("notify_patient", {"phone": PHONE, "message": f"Hi {NAME}, RX-88213 is ready for pickup."}),
    ("team_handoff", {"pickup_id": "RX-88213", "summary": LEAKY}),
]


class AuditLog:
    """The backend: every tool writes the arguments it received into SQLite."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with sqlite3.connect(path) as db:
            db.execute("CREATE TABLE received (tool TEXT, args TEXT)")

    def write(self, tool: str, **args: Any) -> str:
        with sqlite3.connect(self.path) as db:
            db.execute("INSERT INTO received VALUES (?, ?)", (tool, json.dumps(args, sort_keys=True)))
        return f"{tool}: ok"

    def received(self, tool: str) -> list[dict[str, Any]]:
        with sqlite3.connect(self.path) as db:
            rows = db.execute("SELECT args FROM received WHERE tool = ? ORDER BY rowid", (tool,))
            return [json.loads(r[0]) for r in rows]


def make_tools(log: AuditLog) -> list[BaseTool]:
    @tool
    def verify_identity(name: str, phone: str) -> str:
        """Verify the patient's identity against the record."""
        return log.write("verify_identity", name=name, phone=phone)

    @tool
    def process_payment(name: str, insurance: str, card: str, amount: float, note: str = "") -> str:
        """Charge the visit."""
        return log.write("process_payment", name=name, insurance=insurance, card=card,
                         amount=amount, note=note)

    @tool
    def notify_patient(phone: str, message: str) -> str:
        """Text the patient."""
        return log.write("notify_patient", phone=phone, message=message)

    @tool
    def team_handoff(pickup_id: str, summary: str) -> str:
        """Hand the case to the pharmacy team."""
        return log.write("team_handoff", pickup_id=pickup_id, summary=summary)

    return [verify_identity, process_payment, notify_patient, team_handoff]


def workflow_script(messages: list[BaseMessage]) -> Any:
    """The leaky model: follows PLAN; after an error result it retries that tool with less."""
    results = [m for m in messages if isinstance(m, ToolMessage)]
    if results and results[-1].status == "error":
        return [{"name": "team_handoff", "args": {"pickup_id": "RX-88213", "summary": CLEAN},
                 "id": f"retry_{len(results)}"}]
    if any(r.name == "team_handoff" and r.status == "success" for r in results):
        return "All done: the order is with the pharmacy."
    name, args = PLAN[len(results)]
    return [{"name": name, "args": args, "id": f"call_{name}"}]


def build_agent(path: str, guard: Guard, log: AuditLog, model: ScriptedChatModel) -> Any:
    tools = make_tools(log)
    if path == "decorator":
        tools = [purpose_bound(t, guard=guard, **SPECS[t.name]) for t in tools]
        return create_agent(model, tools=tools)
    return create_agent(model, tools=tools, middleware=[PurposeBoundMiddleware(guard, tools=SPECS)])


Runner = Callable[[str, str], tuple[dict[str, Any], AuditLog, ScriptedChatModel]]


@pytest.fixture
def run_workflow(tmp_path: Path, tpguard_spans: SpanCapture) -> Runner:
    def run(path: str, mode: str) -> tuple[dict[str, Any], AuditLog, ScriptedChatModel]:
        guard = Guard(PolicyKB.from_dict(POLICY), mode=mode,  # type: ignore[arg-type]
                      tracer_provider=tpguard_spans.provider)
        log = AuditLog(tmp_path / f"{path}-{mode}.sqlite")
        model = ScriptedChatModel(workflow_script)
        agent = build_agent(path, guard, log, model)
        result = agent.invoke({"messages": [{"role": "user", "content": "Finish the visit."}]})
        return result, log, model

    return run


PATHS = ["decorator", "middleware"]


def assert_first_three_unchanged(log: AuditLog) -> None:
    for name, args in PLAN[:3]:
        assert log.received(name) == [args], name


def assert_no_values_in_spans(spans: SpanCapture) -> None:
    dump = spans.dump()
    for atom in POLICY["atoms"]:
        assert atom["value"] not in dump, atom["id"]


@pytest.mark.parametrize("path", PATHS)
def test_audit_changes_nothing_and_records_the_leak(
    path: str, run_workflow: Runner, tpguard_spans: SpanCapture
) -> None:
    result, log, _ = run_workflow(path, "audit")
    assert_first_three_unchanged(log)
    assert log.received("team_handoff") == [{"pickup_id": "RX-88213", "summary": LEAKY}]
    assert result["messages"][-1].content.startswith("All done")
    spans = tpguard_spans.tool_spans()
    assert [s.name.removeprefix("execute_tool ") for s in spans] == [n for n, _ in PLAN]
    assert {s.attributes["tpguard.decision"] for s in spans} == {"allow"}
    handoff = tpguard_spans.tool_spans("team_handoff")[0]
    assert set(handoff.attributes["tpguard.forbidden.atom_types"]) == {"phone", "medical"}
    assert handoff.attributes["gen_ai.tool.call.id"] == "call_team_handoff"
    assert_no_values_in_spans(tpguard_spans)


@pytest.mark.parametrize("path", PATHS)
def test_enforce_blocks_model_sees_error_and_retries(
    path: str, run_workflow: Runner, tpguard_spans: SpanCapture
) -> None:
    result, log, model = run_workflow(path, "enforce")
    assert_first_three_unchanged(log)
    # The leaky handoff never reached the backend; the clean retry did.
    assert log.received("team_handoff") == [{"pickup_id": "RX-88213", "summary": CLEAN}]
    # The model saw the block as an error ToolMessage on its next turn (the middleware then adds
    # a user turn asking it to resend; the decorator cannot).
    after_block = model.seen[4]
    if path == "middleware":
        assert isinstance(after_block[-1], HumanMessage) and "withheld" in after_block[-1].content
        after_block = after_block[:-1]
    error = after_block[-1]
    assert isinstance(error, ToolMessage) and error.status == "error"
    assert error.tool_call_id == "call_team_handoff"
    assert "phone" in error.content and "medical" in error.content and "summary" in error.content
    assert PHONE not in error.content and SYMPTOM not in error.content
    last = result["messages"][-1]
    assert isinstance(last, AIMessage) and last.content.startswith("All done")
    decisions = [s.attributes["tpguard.decision"] for s in tpguard_spans.tool_spans("team_handoff")]
    assert decisions == ["block", "allow"]
    assert len(tpguard_spans.tool_spans()) == 5
    assert {s.attributes["tpguard.decision"] for s in tpguard_spans.tool_spans()[:3]} == {"allow"}
    assert_no_values_in_spans(tpguard_spans)


@pytest.mark.parametrize("path", PATHS)
def test_redact_delivers_summary_without_atoms(
    path: str, run_workflow: Runner, tpguard_spans: SpanCapture
) -> None:
    result, log, model = run_workflow(path, "redact")
    assert_first_three_unchanged(log)
    [received] = log.received("team_handoff")
    summary = received["summary"]
    assert PHONE not in summary and SYMPTOM not in summary
    assert summary == ("Pickup RX-88213 is ready. Patient phone [PHONE_1], reports [MEDICAL_1]. "
                       "Please prepare the order.")
    assert received["pickup_id"] == "RX-88213"
    assert model.calls == 5  # no retry needed: the call went through rewritten
    assert result["messages"][-1].content.startswith("All done")
    decisions = [s.attributes["tpguard.decision"] for s in tpguard_spans.tool_spans()]
    assert decisions == ["allow", "allow", "allow", "redact"]
    assert_no_values_in_spans(tpguard_spans)
