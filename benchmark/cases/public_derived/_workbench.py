"""WorkBench queries → drafts (olly-styles/WorkBench @ 42f1b6dc, MIT).

Per query (``processed/queries_and_answers/*.csv``): the query is the prompt; the ``answer`` list
(``calendar.delete_event.func(event_id="00000256")``, parsed with :mod:`ast`) gives the gold
writes. WorkBench's agent must find ids and addresses before writing, and the answers list only
the writes, so the implied look-ups are added with their gold arguments: the company directory
(``find_email_address`` by first name) for every colleague address a write uses, and
``search_customers`` / ``search_events`` / ``search_emails`` / ``search_tasks`` by name, subject
or title for every customer, event, e-mail or task id it touches. Atoms: the CRM records touched
(name, e-mail, phone, customer id, assigned rep), colleague addresses, and the ids of the events,
e-mails and tasks touched. Queries without a write (WorkBench's "no action" answers) are skipped.
"""

from __future__ import annotations

import ast
import csv
import json
from collections import Counter
from pathlib import Path
from typing import Any

from ._common import AtomBag, Draft, SourceCall, SourceTool, json_type_of

__all__ = ["WORKBENCH_FILES", "workbench_drafts"]

_QA = "workbench/processed/queries_and_answers"
WORKBENCH_FILES = (f"{_QA}/email_queries_and_answers.csv",
                   "workbench/processed/customer_relationship_manager_data.csv",
                   "workbench/processed/calendar_events.csv", "workbench/processed/emails.csv",
                   "workbench/processed/project_tasks.csv")
_R, _E, _D = ("record", "records"), ("email", "emails"), ("document", "documents")
#: tool → (purpose, (sink, primitive), operation, free-text slots)
_TOOLS: dict[str, tuple[str, tuple[str, str], str, tuple[str, ...]]] = {
    "send_email": ("send an e-mail to a colleague", _E, "create", ("subject", "body")),
    "reply_email": ("reply to an e-mail", _E, "create", ("body",)),
    "forward_email": ("forward an e-mail to a colleague", _E, "create", ()),
    "delete_email": ("delete an e-mail from the inbox", _R, "create", ()),
    "create_event": ("add an event to the calendar", _R, "create", ()),
    "update_event": ("change a calendar event", _R, "create", ()),
    "delete_event": ("remove a calendar event", _R, "create", ()),
    "create_task": ("create a task on the project board", _R, "create", ()),
    "update_task": ("change a task on the project board", _R, "create", ()),
    "delete_task": ("remove a task from the project board", _R, "create", ()),
    "add_customer": ("add a customer to the CRM", _R, "create", ()),
    "update_customer": ("change a customer's CRM record", _R, "create", ()),
    "delete_customer": ("remove a customer from the CRM", _R, "create", ()),
    "create_plot": ("plot website analytics", _D, "create", ()),
    "find_email_address": ("look up a colleague's address in the company directory", _R,
                           "lookup", ()),
    "search_customers": ("find a customer's CRM record by name", _R, "lookup", ()),
    "search_events": ("find a calendar event by name", _R, "lookup", ()),
    "search_emails": ("find an e-mail by subject", _R, "lookup", ()),
    "search_tasks": ("find a project task by name", _R, "lookup", ()),
}
_DOMAINS = {"email": "workplace email", "calendar": "workplace calendar",
            "customer_relationship_manager": "sales CRM", "project_management": "project management",
            "analytics": "web analytics"}


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _parse(text: str) -> tuple[str, str, dict[str, Any]]:
    node = ast.parse(text, mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        raise ValueError("not a call")
    parts = ast.unparse(node.func).split(".")  # domain.tool.func
    args = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
    return parts[0], parts[1], args


class _World:
    def __init__(self, root: Path) -> None:
        p = root / "workbench" / "processed"
        self.customers = {r["customer_id"]: r for r in _csv(p / "customer_relationship_manager_data.csv")}
        self.events = {r["event_id"]: r for r in _csv(p / "calendar_events.csv")}
        self.emails = {r["email_id"]: r for r in _csv(p / "emails.csv")}
        self.tasks = {r["task_id"]: r for r in _csv(p / "project_tasks.csv")}

    def lookups(self, writes: list[SourceCall], bag: AtomBag) -> list[SourceCall]:
        out: list[SourceCall] = []
        for c in writes:
            a = c.arguments
            if (cid := a.get("customer_id")) in self.customers:
                r = self.customers[cid]
                out.append(SourceCall("search_customers", {"customer_name": r["customer_name"]}))
                bag.add("person_name", r["customer_name"], "customer name")
                bag.add("customer_id", cid, "customer id")
                bag.add("email", r["customer_email"], "customer e-mail")
                bag.add("phone_number", r["customer_phone"] or None, "customer phone")
                bag.add("email", r["assigned_to_email"], "assigned sales rep")
            if (eid := a.get("event_id")) in self.events:
                r = self.events[eid]
                out.append(SourceCall("search_events", {"query": r["event_name"]}))
                bag.add("event_id", eid, "calendar event id")
                bag.add("email", r["participant_email"], "event participant")
            if (mid := a.get("email_id")) in self.emails:
                r = self.emails[mid]
                out.append(SourceCall("search_emails", {"query": r["subject"]}))
                bag.add("message_id", mid, "e-mail id")
                bag.add("email", r["sender/recipient"], "e-mail sender")
            if (tid := a.get("task_id")) in self.tasks:
                r = self.tasks[tid]
                out.append(SourceCall("search_tasks", {"task_name": r["task_name"]}))
                bag.add("task_id", tid, "project task id")
                bag.add("email", r["assigned_to_email"], "task assignee")
            for v in a.values():
                if isinstance(v, str) and v.endswith("@atlas.com"):
                    first = v.split("@")[0].split(".")[0]
                    out.append(SourceCall("find_email_address", {"name": first}))
                    bag.add("email", v, "colleague e-mail")
        seen: set[str] = set()
        return [c for c in out if (k := json.dumps([c.tool, c.arguments], sort_keys=True)) not in seen
                and not seen.add(k)]  # type: ignore[func-returns-value]


def workbench_drafts(source: Path) -> tuple[list[Draft], Counter[str]]:
    """Drafts of the 690 WorkBench queries that change state, and counts of queries skipped."""
    world = _World(source)
    staged = []
    skipped: Counter[str] = Counter()
    for path in sorted((source / _QA).glob("*_queries_and_answers.csv")):
        family = path.name.removesuffix("_queries_and_answers.csv")
        for n, row in enumerate(_csv(path)):
            parsed = [_parse(s) for s in ast.literal_eval(row["answer"])]
            if not parsed:
                skipped["no action expected"] += 1
                continue
            writes = [SourceCall(tool, args) for _d, tool, args in parsed]
            bag = AtomBag()
            calls = world.lookups(writes, bag) + writes
            domain = _DOMAINS.get(parsed[0][0], "workplace")
            staged.append((f"workbench_{family}_{n}", row["query"], domain, calls, bag, family))
    seen: dict[str, list[dict[str, Any]]] = {}
    for s in staged:
        for c in s[3]:
            seen.setdefault(c.tool, []).append(c.arguments)
    tools = {}
    for name, argl in seen.items():
        purpose, (sink, primitive), op, free = _TOOLS[name]
        params = list(dict.fromkeys(k for a in argl for k in a))
        tools[name] = SourceTool(
            name=name, purpose=purpose, sink=sink, primitive=primitive, operation=op,
            schema={"type": "object",
                    "properties": {p: json_type_of(a[p] for a in argl if p in a) for p in params},
                    "required": [p for p in params if all(p in a for a in argl)]},
            free_text=tuple(f for f in free if f in params),
            description=purpose[:1].upper() + purpose[1:] + ".")
    drafts = [Draft(
        case_id=cid, source="workbench", source_id=cid.removeprefix("workbench_"), domain=domain,
        prompt=query, tools={c.tool: tools[c.tool] for c in calls}, calls=calls, atoms=bag.atoms,
        labels=bag.labels,
        metadata={"source_domain": family,
                  "implied_calls": sum(1 for c in calls if tools[c.tool].operation == "lookup")},
        scenario=json.dumps(["workbench", [[c.tool, c.arguments] for c in calls]], sort_keys=True))
        for cid, query, domain, calls, bag, family in staged]
    return drafts, skipped
