"""τ²-bench banking_knowledge → drafts (sierra-research/tau2-bench @ a2c02472, MIT).

Per task (``tasks/task_*.json``): the user instructions are the prompt; the gold actions are
flattened — ``call_discoverable_agent_tool`` / ``call_discoverable_user_tool`` become calls of the
named tool (its numeric suffix dropped) with the parsed arguments; ``unlock_…``, ``give_…`` and
the user's ``request_human_agent_transfer`` are bookkeeping and dropped. The customer is the
``users`` record the calls name (or the one named in the instructions). The policy's implied
steps are added ("verify their identity … any 2 out of date of birth, email, phone number,
address … then call the verification logging tool"): ``get_user_information_by_name``, a
``verify_identity`` check with the e-mail and phone the customer gives (no free-text slot), and
``log_verification`` with the record's values when the source lists none. Atoms: the record
(name, user id, address, e-mail, phone, date of birth), the customer's accounts and balances,
debit cards (id, last four, CVV, expiry), credit-card accounts and balances, income and the
transactions the calls name.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from ._common import AtomBag, Draft, SourceCall
from ._implied import with_implied
from ._tau2 import ToolRow, scenario_key, tools_from_calls

__all__ = ["BANKING_FILES", "banking_drafts"]

BANKING_FILES = ("tau2/banking_knowledge/tasks", "tau2/banking_knowledge/db.json")
_SUFFIX = re.compile(r"_\d{4}$")
_DROP = {"unlock_discoverable_agent_tool", "give_discoverable_user_tool",
         "request_human_agent_transfer"}
_R, _P, _H = ("record", "records"), ("payment", "payments"), ("handoff", "handoffs")
_PAY = ("pay_", "transfer_funds", "submit_transaction", "apply_statement_credit",
        "apply_checking_account_credit", "apply_savings_account_credit")
_DOMAINS = (("dispute", "banking disputes"), ("debit_card", "banking debit cards"),
            ("credit_card", "banking credit cards"), ("credit_limit", "banking credit cards"),
            ("bank_account", "banking accounts"), ("account_credit", "banking accounts"),
            ("referral", "banking referrals"), ("email", "banking account updates"),
            ("transfer", "banking transfers"), ("interest", "banking accounts"))


def _spec(name: str) -> ToolRow:
    words = name.replace("_", " ")
    if name in ("get_user_information_by_name", "verify_identity", "log_verification"):
        return {"get_user_information_by_name": ("find the customer's record by full name", _R,
                                                 "lookup"),
                "verify_identity": ("check two identity facts the customer gives against the "
                                    "record", _R, "lookup"),
                "log_verification": ("log the identity verification in the verification "
                                     "records", _R, "create")}[name]
    if "transfer_to_human" in name or name.endswith("_transfer"):
        return (f"hand the customer to a human agent: {words}", _H, "create")
    if name.startswith(_PAY):
        return (f"move money for the customer: {words}", _P, "create")
    op = "lookup" if name.startswith(("get_", "list_", "search_")) else "create"
    return (f"banking {'look-up' if op == 'lookup' else 'action'}: {words}", _R, op)


def _calls(actions: list[dict[str, Any]]) -> list[SourceCall]:
    out = []
    for a in actions:
        name, args = a["name"], dict(a.get("arguments") or {})
        if name in _DROP:
            continue
        if name.startswith("call_discoverable"):
            name = args.get("agent_tool_name") or args.get("discoverable_tool_name") or ""
            inner = args.get("arguments") or {}
            args = json.loads(inner) if isinstance(inner, str) else dict(inner)
            name = _SUFFIX.sub("", name)
        out.append(SourceCall(name, args))
    return out


def _customer(calls: list[SourceCall], text: str, users: dict[str, Any]) -> str | None:
    for c in calls:
        if str(c.arguments.get("user_id")) in users:
            return str(c.arguments["user_id"])
    return next((u for u, r in sorted(users.items()) if r.get("name") and r["name"] in text), None)


def _atoms(bag: AtomBag, uid: str, db: dict[str, Any], calls: list[SourceCall]) -> None:
    u = db["users"]["data"][uid]
    bag.add("person_name", u.get("name"), "customer name")
    bag.add("user_id", uid, "user id")
    bag.add("street_address", u.get("address"), "address")
    bag.add("email", u.get("email"), "email")
    bag.add("phone_number", u.get("phone_number"), "phone number")
    bag.add("date_of_birth", u.get("date_of_birth"), "date of birth")
    for acc in sorted(db["accounts"]["data"].values(), key=lambda a: str(a.get("account_id"))):
        if acc.get("user_id") == uid:
            bag.add("account_id", acc["account_id"], f"{acc.get('class', 'bank')} account id")
            bag.add("account_balance", acc.get("current_holdings"), f"{acc.get('class')} balance")
    for card in sorted(db["debit_cards"]["data"].values(), key=lambda c: str(c.get("card_id"))):
        if card.get("user_id") == uid:
            bag.add("card_id", card["card_id"], "debit card id")
            bag.add("card_last4", card.get("last_4_digits"), "debit card last four")
            bag.add("cvv", card.get("cvv"), "debit card CVV")
            bag.add("card_expiry", card.get("expiration_date"), "debit card expiry")
    for cc in sorted(db["credit_card_accounts"]["data"].values(), key=lambda c: str(c["account_id"])):
        if cc.get("user_id") == uid:
            bag.add("account_id", cc["account_id"], "credit card account id")
            bag.add("account_balance", cc.get("current_balance"), "credit card balance")
    for c in calls:
        for key in ("transaction_id", "dispute_id"):
            bag.add(key, c.arguments.get(key), key.replace("_", " "))


def _implied(uid: str, u: dict[str, Any], calls: list[SourceCall]) -> list[SourceCall]:
    out = [SourceCall("get_user_information_by_name", {"name": u["name"]}),
           SourceCall("verify_identity", {"user_id": uid, "email": u["email"],
                                          "phone_number": u["phone_number"]})]
    if not any(c.tool == "log_verification" for c in calls):
        out.append(SourceCall("log_verification", {
            k: u[k] for k in ("name", "user_id", "address", "email", "phone_number",
                              "date_of_birth")} | {"time_verified": "2025-11-14 03:40:00 EST"}))
    return out


def _domain(calls: list[SourceCall]) -> str:
    for c in calls:
        if c.tool in ("log_verification", "verify_identity") or c.tool.startswith("get_"):
            continue
        return next((d for k, d in _DOMAINS if k in c.tool), "banking support")
    return "banking support"


def banking_drafts(source: Path) -> tuple[list[Draft], Counter[str]]:
    """Drafts of the 97 banking_knowledge tasks, and counts of tasks skipped."""
    root = source / "tau2" / "banking_knowledge"
    db = json.loads((root / "db.json").read_text(encoding="utf-8"))
    users = db["users"]["data"]
    staged = []
    skipped: Counter[str] = Counter()
    for path in sorted((root / "tasks").glob("task_*.json")):
        task = json.loads(path.read_text(encoding="utf-8"))
        text = str((task.get("user_scenario") or {}).get("instructions") or "")
        calls = _calls((task.get("evaluation_criteria") or {}).get("actions") or [])
        uid = _customer(calls, text, users)
        if uid is None:
            skipped["no customer record (a new applicant)"] += 1
            continue
        # a verification log with placeholder values marks a customer who must not be verified
        calls = [c for c in calls if c.tool != "log_verification"
                 or c.arguments.get("user_id") == uid]
        calls, added = with_implied(calls, _implied(uid, users[uid], calls))
        bag = AtomBag()
        _atoms(bag, uid, db, calls)
        staged.append((task, text, calls, bag, uid, added))
    tools = tools_from_calls("banking", (s[2] for s in staged), _spec,
                             {"transfer_to_human_agents": ("summary",)})
    drafts = [Draft(
        case_id=f"tau2_banking_{task['id'].removeprefix('task_')}", source="tau2_banking",
        source_id=str(task["id"]), domain=_domain(calls), prompt=text,
        tools={c.tool: tools[c.tool] for c in calls}, calls=calls, atoms=bag.atoms,
        labels=bag.labels, metadata={"source_domain": "banking", "implied_calls": added},
        scenario=scenario_key("banking", uid, calls))
        for task, text, calls, bag, uid, added in staged]
    return drafts, skipped
