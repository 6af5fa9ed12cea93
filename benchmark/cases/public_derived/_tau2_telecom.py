"""τ²-bench telecom → drafts (sierra-research/tau2-bench, ``tasks.json`` @ 37199f36 and
``tasks_small.json``, MIT).

Per task: ``reason_for_call`` + ``known_info`` form the prompt; ``evaluation_criteria.actions``
are the gold calls — the agent's (refuel data, enable roaming, payment request, transfer) and the
user's device steps (toggle airplane mode, reseat the SIM, grant an app permission …), which a
single-agent case gives the agent as remote device-support tools. The policy's implied steps are
added: "You must first identify the customer" (look-up by phone number, §Customer Lookup), then
the line in question and the bills the writes touch, and the first diagnostic of the
troubleshooting path (status bar, speed test or MMS check — step x.0 of the workflow). Atoms come from the customer's record in ``db.toml``
(name, date of birth, e-mail, phone, address, card last four and expiry, customer, line and
bill ids, the lines' phone numbers). Persona variants of a scenario share its key and count once.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import tomllib

from ._common import AtomBag, Draft, SourceCall
from ._implied import with_implied
from ._tau2 import ToolRow, scenario_key, tools_from_calls

__all__ = ["TELECOM_FILES", "telecom_drafts"]

TELECOM_FILES = ("tau2/telecom/tasks.json", "tau2/telecom/tasks_small.json",
                 "tau2/telecom/db.toml")
_PHONE = re.compile(r"phone number (\d{3}-\d{3}-\d{4})")
_R, _P, _H, _X = ("record", "records"), ("payment", "payments"), ("handoff", "handoffs"), (
    "external", "records")
_AGENT: dict[str, ToolRow] = {
    "get_customer_by_phone": ("identify the customer from their phone number", _R, "lookup"),
    "get_details_by_id": ("read a line's plan, usage and roaming status", _R, "lookup"),
    "get_bills_for_customer": ("read the customer's bills and their status", _R, "lookup"),
    "check_status_bar": ("read the phone's status bar: signal, data, airplane mode", _R, "lookup"),
    "run_speed_test": ("measure the phone's mobile data speed", _R, "lookup"),
    "can_send_mms": ("check whether the messaging app can send MMS", _R, "lookup"),
    "refuel_data": ("add data to a line and charge it to the account", _P, "create"),
    "enable_roaming": ("enable roaming on a line", _R, "create"),
    "resume_line": ("resume a suspended line", _R, "create"),
    "send_payment_request": ("send the customer a payment request for a bill", _P, "create"),
    "make_payment": ("pay the requested bill with the method on file", _P, "create"),
    "transfer_to_human_agents": ("transfer the customer to a human agent with a summary", _H,
                                 "create"),
}
_DOMAINS = {"mobile_data_issue": "telecom mobile data", "mms_issue": "telecom messaging",
            "service_issue": "telecom service"}
#: Step x.0 of each troubleshooting path (tech_support_workflow.md): the diagnostic that
#: establishes the issue — status bar (no service), speed test (mobile data), MMS check.
_DIAGNOSTIC = {"service_issue": "check_status_bar", "mobile_data_issue": "run_speed_test",
               "mms_issue": "can_send_mms"}


def _spec(name: str) -> ToolRow:
    return _AGENT.get(name) or (f"guide the customer's phone through: {name.replace('_', ' ')}",
                                _X, "create")


def _customer_atoms(bag: AtomBag, c: dict[str, Any], db: dict[str, Any]) -> None:
    bag.add("customer_id", c["customer_id"], "customer id")
    bag.add("person_name", c.get("full_name"), "customer name")
    bag.add("date_of_birth", c.get("date_of_birth"), "date of birth")
    bag.add("email", c.get("email"), "email")
    bag.add("phone_number", c.get("phone_number"), "phone number")
    addr = c.get("address") or {}
    bag.add("street_address", addr.get("street"), "street address")
    bag.add("zip_code", addr.get("zip_code"), "zip code")
    for pm in c.get("payment_methods") or []:
        kind = str(pm.get("method_type", "card")).casefold()
        bag.add("card_last4", pm.get("account_number_last_4"), f"{kind} last four")
        bag.add("card_expiry", pm.get("expiration_date"), f"{kind} expiry")
    lines = {ln["line_id"]: ln for ln in db.get("lines") or []}
    for lid in c.get("line_ids") or []:
        bag.add("line_id", lid, "line id")
        bag.add("phone_number", (lines.get(lid) or {}).get("phone_number"), "line phone number")
    for bid in c.get("bill_ids") or []:
        bag.add("bill_id", bid, "bill id")


def _implied(calls: list[SourceCall], phone: str, own_line: str | None,
             diagnostic: str | None) -> list[SourceCall]:
    """Identify the customer, read the line in question — the one with the phone the customer
    calls about ("No service can be due to a suspended line") and any line a write touches —
    and the bills a payment request refers to, then run the path's first diagnostic."""
    out = [SourceCall("get_customer_by_phone", {"phone_number": phone})]
    lines = dict.fromkeys(([own_line] if own_line else []) + [
        str(c.arguments["line_id"]) for c in calls if c.arguments.get("line_id")])
    out += [SourceCall("get_details_by_id", {"id": lid}) for lid in lines]
    customers = dict.fromkeys(str(c.arguments["customer_id"]) for c in calls
                              if c.arguments.get("bill_id") and c.arguments.get("customer_id"))
    out += [SourceCall("get_bills_for_customer", {"customer_id": cid}) for cid in customers]
    return out + ([SourceCall(diagnostic, {})] if diagnostic else [])


def telecom_drafts(source: Path) -> tuple[list[Draft], Counter[str]]:
    """Drafts of the 114 telecom base tasks and the 20 of ``tasks_small.json`` (drawn from the
    full set, none of them a base task), and counts of tasks skipped."""
    root = source / "tau2" / "telecom"
    tasks = [t for name in ("tasks.json", "tasks_small.json")
             for t in json.loads((root / name).read_text(encoding="utf-8"))]
    db = tomllib.loads((root / "db.toml").read_text(encoding="utf-8"))
    by_phone = {c["phone_number"]: c for c in db.get("customers") or []}
    staged = []
    skipped: Counter[str] = Counter()
    for task in tasks:
        instr = (task.get("user_scenario") or {}).get("instructions") or {}
        m = _PHONE.search(instr.get("known_info") or "")
        customer = by_phone.get(m.group(1)) if m else None
        if customer is None:
            skipped["customer record not found"] += 1
            continue
        calls = [SourceCall(a["name"], dict(a.get("arguments") or {}))
                 for a in (task.get("evaluation_criteria") or {}).get("actions") or []]
        own = next((ln["line_id"] for ln in db.get("lines") or []
                    if ln.get("phone_number") == customer["phone_number"]), None)
        kind = str(task["id"]).split("]", 1)[0].lstrip("[")
        calls, added = with_implied(
            calls, _implied(calls, customer["phone_number"], own, _DIAGNOSTIC.get(kind)))
        bag = AtomBag()
        _customer_atoms(bag, customer, db)
        staged.append((task, instr, calls, bag, customer["customer_id"], added))
    tools = tools_from_calls("telecom", (s[2] for s in staged), _spec)
    drafts = []
    for n, (task, instr, calls, bag, cid, added) in enumerate(staged):
        kind = str(task["id"]).split("]", 1)[0].lstrip("[")
        drafts.append(Draft(
            case_id=f"tau2_telecom_{n}", source="tau2_telecom", source_id=str(task["id"]),
            domain=_DOMAINS.get(kind, "telecom support"),
            prompt=f"{instr.get('reason_for_call', '').strip()}\n{instr.get('known_info', '').strip()}",
            tools={c.tool: tools[c.tool] for c in calls}, calls=calls, atoms=bag.atoms,
            labels=bag.labels, metadata={"source_domain": "telecom", "implied_calls": added},
            scenario=scenario_key("telecom", cid, calls)))
    return drafts, skipped
