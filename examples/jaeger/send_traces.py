"""Send the traces of a small guarded healthcare run to Jaeger (or any OTLP collector).

    docker compose -f examples/jaeger/docker-compose.yml up -d
    python examples/jaeger/send_traces.py                 # → http://localhost:4318 by default
    OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318 python examples/jaeger/send_traces.py

Then open http://localhost:16686, service ``tpguard-example``. The script guards five tool calls
of the ToolPrivacyBench healthcare case (Table 1) in ``enforce`` mode; one over-shares and is
blocked, and the agent retries it with less — the trace shows both.
"""

from __future__ import annotations

import argparse
import uuid
from pathlib import Path
from typing import Any

from tpguard import Guard, GuardViolation, purpose_bound
from tpguard.telemetry import agent_run_span, configure

POLICY = Path(__file__).resolve().parents[1] / "healthcare_policy.yaml"


def build_tools(guard: Guard) -> dict[str, Any]:
    """Plain functions bound to their purpose; the policy file already names each tool's sink."""

    @purpose_bound(purpose="verify the patient and open the visit record", sink="record",
                   free_text=["note"], guard=guard)
    def register_patient(patient: str, phone: str, note: str = "") -> str:
        return "visit V-1 opened"

    @purpose_bound(purpose="process payment", sink="payment", free_text=["note"], guard=guard)
    def process_payment(payer: str, plan: str, card: str, note: str = "") -> str:
        return "payment accepted"

    @purpose_bound(purpose="tell the patient the next step", sink="notification",
                   free_text=["message"], guard=guard)
    def notify_patient(to: str, message: str) -> str:
        return "sms queued"

    @purpose_bound(purpose="hand the case to the pharmacy team", sink="handoff",
                   free_text=["summary", "work_notes"], guard=guard)
    def team_handoff(ticket: str, summary: str, work_notes: str = "") -> str:
        return "handed off"

    return {f.__name__: f for f in (register_patient, process_payment, notify_patient, team_handoff)}


def run(endpoint: str | None, mode: str) -> None:
    run_id = f"example-{uuid.uuid4().hex[:8]}"
    # otlp=True: export even without OTEL_* variables (then to the local Jaeger on :4318)
    provider = configure(service_name="tpguard-example", run_id=run_id, endpoint=endpoint, otlp=True)
    # record_arguments="redacted": show each call's arguments with the atoms typed out (a guard
    # records no argument content unless asked); finding_events="all": one event per finding
    # (a guard records the summary attributes only unless asked)
    guard = Guard(POLICY, mode=mode, tracer_provider=provider,  # type: ignore[arg-type]
                  record_arguments="redacted", finding_events="all")
    tools = build_tools(guard)
    with agent_run_span(provider, "healthcare-agent", run_id=run_id, case_id="healthcare-table1"):
        print(tools["register_patient"](patient="Maria Gonzalez", phone="415-555-0199",
                                        note="reports chest tightness"))
        print(tools["process_payment"](payer="Maria Gonzalez", plan="Blue Shield PPO",
                                       card="**** 4417"))
        print(tools["notify_patient"](to="415-555-0199", message="RX-88213 is ready for pickup"))
        try:  # over-shares: name, symptom and phone have no business in a pharmacy handoff
            tools["team_handoff"](ticket="RX-88213",
                                  summary="Maria Gonzalez, chest tightness, call 415-555-0199")
        except GuardViolation as blocked:
            print(blocked)  # names atom types and fields, never the values
            print(tools["team_handoff"](ticket="RX-88213", summary="prescription ready for pickup"))
    provider.shutdown()  # flush the batch before the process exits
    print(f"sent run {run_id} (service tpguard-example)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--endpoint", help="OTLP base URL (default: OTEL_EXPORTER_OTLP_ENDPOINT, "
                                           "else http://localhost:4318)")
    parser.add_argument("--mode", default="enforce", choices=("audit", "enforce", "redact"))
    args = parser.parse_args()
    run(args.endpoint, args.mode)


if __name__ == "__main__":
    main()
