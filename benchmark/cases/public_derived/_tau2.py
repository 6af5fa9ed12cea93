"""τ²-bench retail and airline → drafts (sierra-research/tau2-bench and tau-bench, MIT).

Per task: ``reason_for_call`` + ``known_info`` form a single-turn prompt (the simulated user is
replaced by what it knows, so runs are deterministic); ``evaluation_criteria.actions`` are the gold
calls; the tool signatures are derived from the gold actions' names and arguments across the
domain (the tool definitions are not part of the data); atoms come from the customer's record —
retail ``db.json``, airline ``tau-bench/airline/users.json`` and the passengers of the
reservations the gold calls touch (seed ``000_*`` §6.1).
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ._common import AtomBag, Draft, SourceCall, SourceTool, json_type_of
from ._implied import airline_lookups, is_read, retail_lookups, with_implied
from ._tau2_tables import DOMAIN_OF_ACTION, FREE_TEXT, TOOLS

__all__ = [
    "AIRLINE_FILES",
    "RETAIL_FILES",
    "ToolRow",
    "domain_of",
    "product_index",
    "profile_atoms",
    "scenario_key",
    "tau2_drafts",
    "tools_from_calls",
]

RETAIL_FILES = ("tau2/retail/tasks.json", "tau2/retail/db.json")
AIRLINE_FILES = ("tau2/airline/tasks.json", "tau-bench/airline/users.json",
                 "tau-bench/airline/reservations.json", "tau-bench/airline/flights.json")
_USER_ID = re.compile(r"user id is\W*([a-z]+_[a-z]+_\d+)", re.IGNORECASE)
_READ = ("get_", "search_", "find_", "list_")


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _actions(task: dict[str, Any]) -> list[dict[str, Any]]:
    return list((task.get("evaluation_criteria") or {}).get("actions") or [])


ToolRow = tuple[str, tuple[str, str], str]  # purpose, (sink, primitive), operation


def tools_from_calls(domain: str, task_calls: Iterable[list[SourceCall]],
                     spec: Callable[[str], ToolRow | None] | None = None,
                     free_text: Mapping[str, tuple[str, ...]] = FREE_TEXT,
                     ) -> dict[str, SourceTool]:
    """Tool signatures from every gold call of the domain: types by value, required = always.
    Purpose, sink and operation come from ``spec(name)``, else from the τ² table."""
    seen: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for calls in task_calls:
        for c in calls:
            seen[c.tool].append(c.arguments)
    out = {}
    for name, args in seen.items():
        params = list(dict.fromkeys(k for c in args for k in c))
        props = {p: json_type_of(c[p] for c in args if p in c) for p in params}
        required = [p for p in params if all(p in c for c in args)]
        default = (name.replace("_", " "), ("record", "records"),
                   "lookup" if name.startswith(_READ) else "create")
        row = spec(name) if spec is not None else None
        purpose, (sink, primitive), operation = row or TOOLS.get((domain, name), default)
        out[name] = SourceTool(
            name=name, purpose=purpose, sink=sink, primitive=primitive, operation=operation,
            schema={"type": "object", "properties": props, "required": required},
            free_text=free_text.get(name, ()), description=purpose[:1].upper() + purpose[1:] + ".",
        )
    return out


def _person(bag: AtomBag, first: str, last: str, dob: str | None, who: str) -> None:
    bag.add("first_name", first, f"{who} first name")
    bag.add("last_name", last, f"{who} last name")
    if dob:
        bag.add("date_of_birth", dob, f"{who} date of birth")


def profile_atoms(bag: AtomBag, uid: str, user: dict[str, Any]) -> None:
    """The customer's record: identity, contact, address, payment methods."""
    bag.add("user_id", uid, "user id")
    name = user.get("name") or {}
    _person(bag, name.get("first_name", ""), name.get("last_name", ""), user.get("dob"), "customer")
    bag.add("email", user.get("email"), "email")
    addr = user.get("address") or {}
    if addr.get("address1"):
        bag.add("street_address", addr["address1"], "street address")
    bag.add("zip_code", addr.get("zip"), "zip code")
    for pm_id, pm in sorted((user.get("payment_methods") or {}).items()):
        source = str(pm.get("source", "payment")).replace("_", " ")
        bag.add("payment_method_id", pm_id, f"{source} payment method id")
        if pm.get("last_four"):
            bag.add("card_last4", pm["last_four"], f"{pm.get('brand', 'card')} card last four")
        if pm.get("balance") is not None:
            bag.add("account_balance", pm["balance"], f"{source} balance")


def _referenced(calls: list[SourceCall], key: str) -> list[str]:
    return list(dict.fromkeys(str(c.arguments[key]) for c in calls if key in c.arguments))


def _retail_user(calls: list[SourceCall], db: dict[str, Any]) -> str | None:
    users, orders = db["users"], db["orders"]
    for uid in _referenced(calls, "user_id"):
        if uid in users:
            return uid
    for c in calls:
        a = c.arguments
        for uid, u in users.items():
            if a.get("email") and u.get("email") == a["email"]:
                return uid
            name, zip_ = u.get("name") or {}, (u.get("address") or {}).get("zip")
            if a.get("zip") and (a.get("first_name"), a.get("last_name"), a["zip"]) == (
                    name.get("first_name"), name.get("last_name"), zip_):
                return uid
    for oid in _referenced(calls, "order_id"):
        if oid in orders:
            return str(orders[oid]["user_id"])
    return None


def _airline_user(calls: list[SourceCall], known: str, users: dict[str, Any],
                  reservations: dict[str, Any]) -> str | None:
    candidates = _referenced(calls, "user_id") + _USER_ID.findall(known)
    candidates += [str(reservations[r]["user_id"]) for r in _referenced(calls, "reservation_id")
                   if r in reservations]
    return next((u for u in candidates if u in users), None)


def domain_of(source_domain: str, calls: list[SourceCall]) -> str:
    for c in calls:
        if c.tool in DOMAIN_OF_ACTION:
            return DOMAIN_OF_ACTION[c.tool]
    return f"{source_domain} support"


def scenario_key(family: str, uid: str, calls: list[SourceCall]) -> str:
    """Same customer and same state changes = same scenario (τ-bench test vs τ² tasks)."""
    writes = [[c.tool, c.arguments] for c in calls if not is_read(c.tool)]
    return json.dumps([family, uid, writes], sort_keys=True, default=str)


def product_index(products: dict[str, Any]) -> dict[str, str]:
    """item id → product id, from a retail product catalogue."""
    return {item: pid for pid, p in products.items() for item in p.get("variants") or {}}


def _draft(domain: str, task: dict[str, Any], tools: dict[str, SourceTool],
           calls: list[SourceCall], bag: AtomBag, uid: str, implied: int) -> Draft:
    instr = (task.get("user_scenario") or {}).get("instructions") or {}
    prompt = f"{instr.get('reason_for_call', '').strip()}\n{instr.get('known_info', '').strip()}"
    return Draft(
        case_id=f"tau2_{domain}_{task['id']}", source=f"tau2_{domain}", source_id=str(task["id"]),
        domain=domain_of(domain, calls), prompt=prompt,
        tools={c.tool: tools[c.tool] for c in calls}, calls=calls, atoms=bag.atoms,
        labels=bag.labels, metadata={"source_domain": domain, "implied_calls": implied},
        scenario=scenario_key(domain, uid, calls),
    )


def tau2_drafts(source: Path, domain: str) -> tuple[list[Draft], Counter[str]]:
    """Drafts for ``domain`` (``retail`` or ``airline``) and counts of tasks that were skipped.

    The implied authentication and look-ups (:mod:`._implied`) are added to the gold calls."""
    tasks = _load(source / "tau2" / domain / "tasks.json")
    if domain == "retail":
        db = _load(source / "tau2/retail/db.json")
        products = product_index(db["products"])
    else:
        users = _load(source / "tau-bench/airline/users.json")
        reservations = _load(source / "tau-bench/airline/reservations.json")
        flights = _load(source / "tau-bench/airline/flights.json")
    staged: list[tuple[dict[str, Any], list[SourceCall], AtomBag, str, int]] = []
    skipped: Counter[str] = Counter()
    for task in tasks:
        calls = [SourceCall(a["name"], dict(a.get("arguments") or {})) for a in _actions(task)]
        known = ((task.get("user_scenario") or {}).get("instructions") or {}).get("known_info") or ""
        bag, implied = AtomBag(), []
        if domain == "retail":
            uid = _retail_user(calls, db)
            if uid is not None:
                user = db["users"][uid]
                profile_atoms(bag, uid, user)
                for oid in user.get("orders", []):
                    bag.add("order_id", oid, "order id")
                by_email = "zip" not in known.casefold() and "@" in known
                implied = retail_lookups(calls, uid, user, products, by_email)
        else:
            uid = _airline_user(calls, known, users, reservations)
            if uid is not None:
                airline_atoms(bag, uid, users[uid], calls, reservations)
                implied = airline_lookups(calls, uid, flights, reservations)
        if uid is None:
            skipped["customer record not found"] += 1
            continue
        calls, added = with_implied(calls, implied)
        staged.append((task, calls, bag, uid, added))
    tools = tools_from_calls(domain, (s[1] for s in staged))
    drafts = [_draft(domain, task, tools, calls, bag, uid, added)
              for task, calls, bag, uid, added in staged]
    return drafts, skipped


def airline_atoms(bag: AtomBag, uid: str, user: dict[str, Any], calls: list[SourceCall],
                   reservations: dict[str, Any]) -> None:
    profile_atoms(bag, uid, user)
    for p in user.get("saved_passengers") or []:
        _person(bag, p.get("first_name", ""), p.get("last_name", ""), p.get("dob"), "saved passenger")
    for rid in user.get("reservations") or []:
        bag.add("reservation_id", rid, "reservation id")
    for rid in _referenced(calls, "reservation_id"):
        for p in (reservations.get(rid) or {}).get("passengers") or []:
            _person(bag, p.get("first_name", ""), p.get("last_name", ""), p.get("dob"), "passenger")
