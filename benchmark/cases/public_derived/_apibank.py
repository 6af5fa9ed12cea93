"""API-Bank level-1/2 dialogs and level-3 chains → drafts (AlibabaResearch/DAMO-ConvAI api-bank,
Apache-2.0).

Per dialog (``lv1-lv2-samples/*/*.jsonl``): the user turns are the prompt and the ``API`` rows
(``api_name`` + ``param_dict``, and the ``[Api(arg=…)]`` calls the tool-search dialogs write
in the AI turns) the gold calls; per level-3 request: ``requirement`` and the
``apis`` chain. ``ToolSearcher`` stays as a look-up (the level-2/3 agent must retrieve its tools).
The implied step: an API taking a ``token`` needs ``GetUserToken`` with the account's username
and password first (API-Bank's own account flow); it is added, from ``init_database/Account.json``,
where the dialog starts mid-session. Atoms: the account record (username, password, token,
e-mail, bank balance) and the sensitive arguments (names, phone, birthday, ids, e-mails).
"""

from __future__ import annotations

import ast
import csv
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from ._common import AtomBag, Draft, SourceCall, SourceTool, json_type_of

__all__ = ["APIBANK_FILES", "apibank_drafts"]

APIBANK_FILES = ("api-bank/lv1-lv2-samples", "api-bank/level-3.json", "api-bank/all_apis.csv",
                 "api-bank/init_database/Account.json")
_ARG_TYPES = {
    "username": "username", "user_name": "person_name", "password": "password",
    "new_password": "password", "old_password": "password", "token": "access_token",
    "email": "email", "recipient": "email", "patient_name": "person_name", "name": "person_name",
    "doctor_name": "person_name", "patient_id": "user_id", "user_id": "user_id",
    "appointment_id": "booking_id", "phone": "phone_number", "phone_number": "phone_number",
    "birthday": "date_of_birth", "date_of_birth": "date_of_birth", "attendees": "person_name",
    "account": "account_id", "id_number": "passport_number", "address": "street_address",
}
_READ = ("Query", "Get", "Search", "Tool", "Emergency", "Symptom", "Calculator", "Dictionary",
         "Translate", "Wiki", "Document", "Image", "Speech", "Like", "Travel", "Geocoding",
         "Clothing", "Organization", "Nearby", "User", "Movie", "Flight", "Hotel", "Account",
         "Tax", "Check")
_DOMAINS = ((("Agenda", "Alarm", "Reminder", "Meeting"), "personal scheduling"),
            (("Registration", "Appointment", "Symptom", "Health", "Emergency"), "health care"),
            (("Bank", "Stock", "Balance", "Tax", "Salary"), "personal finance"),
            (("Token", "Password", "Register", "DeleteAccount", "PersonalInfo", "AccountInfo"),
             "account management"),
            (("Hotel", "Flight", "Travel", "Restaurant", "Geocoding", "Weather"), "travel planning"),
            (("Scene", "TimedSwitch", "Music"), "smart home"))
_FREE = {"content", "text", "message", "description"}
_DESC = re.compile(r'description\s*=\s*"([^"]+)"')


def _load_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


_INLINE = re.compile(r"\[([A-Z]\w*\(.*?\))\]")


def _inline_calls(text: str) -> list[SourceCall]:
    """Calls the level-2 tool-search dialogs write inside the AI turn: ``[QueryReminder(a='…')]``."""
    out = []
    for src in _INLINE.findall(text):
        try:
            node = ast.parse(src, mode="eval").body
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                out.append(SourceCall(node.func.id, {k.arg: ast.literal_eval(k.value)
                                                     for k in node.keywords if k.arg}))
        except (SyntaxError, ValueError):
            continue
    return out


def _dialog_calls(rows: list[dict[str, Any]]) -> list[SourceCall]:
    out: list[SourceCall] = []
    for r in rows:
        if r.get("role") == "API":
            new = [SourceCall(r["api_name"], dict(r.get("param_dict") or {}))]
        elif r.get("role") == "AI":
            new = _inline_calls(str(r.get("text") or ""))
        else:
            continue
        out += [c for c in new if not out or c != out[-1]]
    return out


def _descriptions(path: Path) -> dict[str, str]:
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    out = {}
    for r in rows:
        m = _DESC.search(r.get("api_info") or "")
        if m and r.get("类名"):
            out[r["类名"]] = m.group(1).split(". ")[0].rstrip(".")
    return out


def _domain(calls: list[SourceCall]) -> str:
    for c in calls:
        if c.tool in ("ToolSearcher", "GetUserToken"):
            continue
        for keys, name in _DOMAINS:
            if any(k in c.tool for k in keys):
                return name
    return "information services"


def _with_token(calls: list[SourceCall], accounts: dict[str, Any]) -> tuple[list[SourceCall], int]:
    by_token = {str(a.get("token")): (u, a) for u, a in accounts.items()}
    have = {str(c.arguments.get("username")) for c in calls if c.tool == "GetUserToken"}
    out: list[SourceCall] = []
    added = 0
    for c in calls:
        owner = by_token.get(str(c.arguments.get("token")))
        if owner and owner[0] not in have:
            out.append(SourceCall("GetUserToken", {"username": owner[0],
                                                   "password": owner[1]["password"]}))
            have.add(owner[0])
            added += 1
        out.append(c)
    return out, added


def _atoms(bag: AtomBag, calls: list[SourceCall], accounts: dict[str, Any],
           bank: dict[str, Any]) -> None:
    users = {str(c.arguments.get("username")) for c in calls} | {
        u for u, a in accounts.items() for c in calls if c.arguments.get("token") == a.get("token")}
    for u in sorted(users & set(accounts)):
        a = accounts[u]
        bag.add("username", u, "username")
        bag.add("password", a.get("password"), "password")
        bag.add("access_token", a.get("token"), "session token")
        bag.add("email", a.get("email"), "account e-mail")
        bag.add("account_balance", (bank.get(u) or {}).get("balance"), "bank balance")
    for c in calls:
        for k, v in c.arguments.items():
            t = _ARG_TYPES.get(k)
            for item in v if isinstance(v, list) else [v]:
                if t and isinstance(item, str | int) and len(str(item)) >= 3:
                    bag.add(t, item, k.replace("_", " "))


def apibank_drafts(source: Path) -> tuple[list[Draft], Counter[str]]:
    """Drafts of the level-1/2 dialogs and level-3 chains, and counts of items skipped."""
    root = source / "api-bank"
    accounts = json.loads((root / "init_database/Account.json").read_text(encoding="utf-8"))
    bank_path = root / "init_database/Bank.json"
    bank = json.loads(bank_path.read_text(encoding="utf-8")) if bank_path.is_file() else {}
    desc = _descriptions(root / "all_apis.csv")
    items: list[tuple[str, str, list[SourceCall]]] = []
    for path in sorted((root / "lv1-lv2-samples").glob("*/*.jsonl")):
        rows = _load_jsonl(path)
        prompt = "\n".join(r["text"] for r in rows if r.get("role") == "User")
        items.append((f"{path.parent.name}/{path.stem}", prompt, _dialog_calls(rows)))
    for n, req in enumerate(json.loads((root / "level-3.json").read_text(encoding="utf-8"))):
        calls = [SourceCall(a["api_name"], dict(a.get("input") or {})) for a in req["apis"]]
        items.append((f"level-3/{n}", req["requirement"].strip(), calls))
    staged = []
    skipped: Counter[str] = Counter()
    for sid, prompt, calls in items:
        if not calls:
            skipped["no API call"] += 1
            continue
        calls, added = _with_token(calls, accounts)
        bag = AtomBag()
        _atoms(bag, calls, accounts, bank)
        staged.append((sid, prompt, calls, bag, added))
    seen: dict[str, list[dict[str, Any]]] = {}
    for s in staged:
        for c in s[2]:
            seen.setdefault(c.tool, []).append(c.arguments)
    tools = {}
    for name, argl in seen.items():
        read = name.startswith(_READ) and not name.startswith("AppointmentRegistration")
        params = list(dict.fromkeys(k for a in argl for k in a))
        purpose = desc.get(name) or f"API-Bank {name}"
        sink = "email" if name in ("SendEmail", "EmailReminder") else "record"
        tools[name] = SourceTool(
            name=name, purpose=purpose[:1].lower() + purpose[1:], sink=sink, primitive="records",
            operation="lookup" if read else "create",
            schema={"type": "object",
                    "properties": {p: json_type_of(a[p] for a in argl if p in a) for p in params},
                    "required": [p for p in params if all(p in a for a in argl)]},
            # notes written by Add…/Modify… (agenda, reminder) are free text; a Delete… names
            # the item by its content, a key rather than a message
            free_text=() if read or not name.startswith(("Add", "Modify", "Send", "Email"))
            else tuple(p for p in params if p in _FREE), description=purpose)
    drafts = [Draft(
        case_id="apibank_" + re.sub(r"[^a-z0-9]+", "_", sid.casefold()).strip("_"),
        source="apibank", source_id=sid, domain=_domain(calls), prompt=prompt,
        tools={c.tool: tools[c.tool] for c in calls}, calls=calls, atoms=bag.atoms,
        labels=bag.labels, metadata={"source_domain": sid.split("/")[0], "implied_calls": added},
        # the tool-search variant of a dialog adds retrieval stages: a workflow of its own
        scenario=json.dumps(["apibank", [[c.tool, c.arguments] for c in calls]], sort_keys=True))
        for sid, prompt, calls, bag, added in staged]
    return drafts, skipped
